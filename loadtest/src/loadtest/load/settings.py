"""What every mode that loads the arms in paired windows shares (the benchmark, the ladder, the
sweep)."""

from dataclasses import dataclass, field
from pathlib import Path

from loadtest.lab.arms import ARMS, DEFAULT_ARMS
from loadtest.lab.paths import DEFAULT_RESULTS_DIR


def default_ports() -> dict[str, int]:
    return {name: arm.port for name, arm in ARMS.items()}


@dataclass(frozen=True)
class PairedLoadSettings:
    # Measured on the 2-vCPU machines (docs/methodology.md, "Choosing the defaults"): 0.6 s
    # windows paired best; 1 s windows let the machine's speed drift between partners, 0.4 s
    # ones lose too much to settling.
    window_s: float = 0.6  # one arm's turn; adjacent windows of different arms form a pair
    settle_s: float = 0.2  # the start of each window, not counted: users switch arms in it
    pairs: int = 30  # rounds: the pairs behind every ratio (per repeat, in the benchmark)
    warmup_s: float = 2.0  # discarded, per arm, before the rounds
    users: int = 10  # the reference's `ab -c 10`
    apps: tuple[str, ...] = DEFAULT_ARMS
    workers: int = 1  # uvicorn workers per app
    load_processes: int = 1  # locust processes (a master and workers when more than one)
    pin: bool = True  # the apps on their own CPUs, the load generator on the others
    calibrate: bool = True  # measure locust against a trivial endpoint first
    ports: dict[str, int] = field(default_factory=default_ports)
    results_dir: Path = DEFAULT_RESULTS_DIR
