"""Test builders, shared by every test module: arm lives, scenario runs and window records made
by hand, and the results documents built from them, for testing results and reports without
load."""

from datetime import UTC, datetime
from typing import Any

from loadtest.lab.memory import MemoryReading
from loadtest.lab.pinning import plan_pinning
from loadtest.lab.startup import StartupSamples
from loadtest.load.locust_runs import LocustRun
from loadtest.load.windows import WindowRecord
from loadtest.output.results_file import as_document, run_header
from loadtest.pipeline.records import ArmLife, ScenarioRun
from loadtest.pipeline.results import build_results
from loadtest.pipeline.settings import BenchmarkSettings

VERSIONS = {
    "v1": {
        "python": "3.11.7",
        "fastapi": "0.125.0",
        "pydantic": "1.10.27",
        "pydantic_compiled": True,
        "sqlalchemy": "2.1.9",
        "psycopg": "3.3.9",
    },
    "v2": {
        "python": "3.11.7",
        "fastapi": "0.125.0",
        "pydantic": "2.14.3",
        "pydantic_compiled": True,
        "sqlalchemy": "2.1.9",
        "psycopg": "3.3.9",
    },
    "v2-latest": {
        "python": "3.11.7",
        "fastapi": "0.165.0",
        "pydantic": "2.14.3",
        "pydantic_compiled": True,
        "sqlalchemy": "2.1.9",
        "psycopg": "3.3.9",
    },
}
TWO_ARMS = ("v1", "v2")  # most tests need only a baseline and one other arm
WINDOW_S = 0.8


def make_life(arm: str, repeat: int = 1, problems: dict[str, list[str]] | None = None) -> ArmLife:
    life = ArmLife(arm=arm, repeat=repeat, versions=VERSIONS[arm])
    life.idle = MemoryReading(70.0 + repeat, 60.0)
    life.peak = MemoryReading(90.0 + repeat, 80.0)
    life.after = MemoryReading(85.0 + repeat, 75.0)
    life.problems = problems or {}
    return life


def make_run(
    scenario: str,
    rps_per_round: list[dict[str, float]],
    *,
    repeat: int = 1,
    failures: int = 0,
    app_cpu_busy: float = 0.97,
    cpu_percent: float = 30.0,
    cpu_warnings: int = 0,
    lost_writes: int = 0,
    other_arms_busy: float = 0.0,
    foreign_busy: float = 0.01,
) -> ScenarioRun:
    """One scenario's run: per round, each arm's window at the given r/s (successful requests
    over WINDOW_S), with `failures` more requests in each window of the first arm."""
    windows = []
    arms = tuple(rps_per_round[0])
    for round_, rps_by_arm in enumerate(rps_per_round):
        for arm, rps in rps_by_arm.items():
            successes = round(rps * WINDOW_S)
            failed = failures if arm == arms[0] else 0
            windows.append(
                WindowRecord(
                    repeat=repeat,
                    scenario=scenario,
                    slot=arm,
                    window=len(windows),
                    round=round_,
                    started_at=1000.0 + len(windows),
                    duration_s=WINDOW_S,
                    requests=successes + failed,
                    failures=failed,
                    histogram={10: successes // 2, 20: successes - successes // 2 + failed},
                    app_cpu_s=app_cpu_busy * WINDOW_S,
                    db_cpu_s=None,
                    cpu_span_s=WINDOW_S,
                    other_arms_cpu_s=other_arms_busy * WINDOW_S,
                    foreign_cpu_s=foreign_busy * WINDOW_S,
                )
            )
    acknowledged = {arm: sum(w.successes for w in windows if w.arm == arm) for arm in arms}
    failed = {arm: sum(w.failures for w in windows if w.arm == arm) for arm in arms}
    locust = LocustRun(
        requests=sum(w.requests for w in windows),
        failures=0,
        elapsed_s=10.0,
        histogram={},
        cpu_warnings=cpu_warnings,
        cpu_percent=cpu_percent,
        files={"json": f"{scenario}.json"},
    )
    run = ScenarioRun(
        repeat=repeat,
        scenario=scenario,
        arms=arms,
        windows=windows,
        locust=locust,
        acknowledged=acknowledged,
        failures=failed,
        warmup_requests=dict.fromkeys(arms, 20),
        writes=scenario == "write",
    )
    if scenario == "write":
        run.new_rows = {
            arm: count - (lost_writes if arm == arms[0] else 0)
            for arm, count in acknowledged.items()
        }
    return run


def steady_rounds(v1: float, v2: float, rounds: int = 8) -> list[dict[str, float]]:
    """Rounds in alternating order whose ratio is exactly v2 / v1."""
    return [
        {"v1": v1, "v2": v2} if round_ % 2 == 0 else {"v2": v2, "v1": v1}
        for round_ in range(rounds)
    ]


SETTINGS = BenchmarkSettings(apps=TWO_ARMS, repeats=1, pairs=8, scenarios=("read", "write"))
NOW = datetime(2026, 1, 1, tzinfo=UTC)


HOST = {
    "cpu_model": "Test CPU",
    "cores": 2,
    "cores_available": 2,
    "memory_gib": 8.0,
    "os": "Linux test",
    "python": "3.11.7",
}


def build(
    runs: list[ScenarioRun],
    settings: BenchmarkSettings = SETTINGS,
    lives: list[ArmLife] | None = None,
    calibration: dict[str, Any] | None = None,
    startup: dict[str, StartupSamples] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A benchmark's results.json content, as the run writes it and the reports read it."""
    return as_document(
        "benchmark",
        run_header(NOW, NOW, HOST)
        | build_results(
            startup=startup,
            settings=settings,
            lives=lives if lives is not None else [make_life(arm) for arm in settings.apps],
            runs=runs,
            calibration=calibration or {"rps": 6000.0},
            database={"kind": "embedded", "server_version": "18"},
            pinning=plan_pinning(True, {0, 1}),
            **extra,
        ),
    )


def steady_runs() -> list[ScenarioRun]:
    return [
        make_run("read", steady_rounds(100.0, 300.0)),
        make_run("write", steady_rounds(400.0, 400.0)),
    ]


def three_arm_rounds(v1: float, v2: float, latest: float, rounds: int = 9) -> list[dict]:
    """Rounds in rotating order (abc, bca, cab) with fixed r/s per arm."""
    rps = {"v1": v1, "v2": v2, "v2-latest": latest}
    arms = list(rps)
    return [{arm: rps[arm] for arm in arms[i % 3 :] + arms[: i % 3]} for i in range(rounds)]
