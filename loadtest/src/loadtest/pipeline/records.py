"""What a benchmark run records besides its windows: each arm's process in each repeat, and
each scenario's locust run."""

from dataclasses import dataclass, field
from typing import Any

from loadtest.lab.memory import MemoryReading
from loadtest.lab.statements import StatementCount
from loadtest.load.locust_runs import LocustRun
from loadtest.load.windows import WindowRecord


@dataclass
class ArmLife:
    """One arm's process in one repeat: versions, memory and verification."""

    arm: str
    repeat: int  # 1-based
    versions: dict[str, Any] = field(default_factory=dict)
    idle: MemoryReading | None = None
    peak: MemoryReading | None = None
    after: MemoryReading | None = None
    problems: dict[str, list[str]] = field(default_factory=dict)  # verification, per scenario
    cpus: tuple[int, ...] | None = None  # where its process may run, where that was read


@dataclass
class ScenarioRun:
    """One locust run: one scenario in one repeat, every verified arm in alternating windows."""

    repeat: int  # 1-based
    scenario: str
    arms: tuple[str, ...]
    windows: list[WindowRecord]
    locust: LocustRun
    acknowledged: dict[str, int]  # successful requests per arm, warm-up and settle included
    failures: dict[str, int] = field(default_factory=dict)  # per arm, every phase
    warmup_requests: dict[str, int] = field(default_factory=dict)  # per arm: 0 = started late
    writes: bool = False  # its request is not a GET: its acknowledged requests are writes
    # Rows each arm stored, counted in the database; None where they are not counted (a
    # compare file's service keeps its own database).
    new_rows: dict[str, int] | None = None
    # SQL statements each arm sent and sessions it opened over the run (lab/statements.py);
    # an arm that has no count (no /statements route) is left out.
    statements: dict[str, StatementCount] = field(default_factory=dict)
