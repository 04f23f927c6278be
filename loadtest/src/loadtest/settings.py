"""Benchmark settings: the defaults, the --quick preset, and where things live."""

from dataclasses import dataclass, field
from pathlib import Path

from loadtest.scenarios import SCENARIO_NAMES

REPOSITORY_ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Arm:
    """One app under test: which locked environment runs which module, on which port."""

    name: str  # in options, output and results.json
    project: str  # the uv project whose .venv runs it; also its compose service and log name
    module: str  # what uvicorn serves
    port: int
    summary: str  # what makes it differ from the others


ARMS = {
    arm.name: arm
    for arm in (
        Arm("v1", "app_v1", "app_v1.main:app", 8001, "Pydantic 1"),
        Arm("v2", "app_v2", "app_v2.main:app", 8002, "Pydantic 2"),
        # app_v2's code, unchanged, in an environment that moves only FastAPI to its latest release.
        Arm("v2-latest", "app_v2_latest", "app_v2.main:app", 8003, "Pydantic 2, latest FastAPI"),
    )
}
APP_NAMES = tuple(ARMS)
BASELINE = "v1"  # every arm's ratio is over this arm's figure ...
# ... and these pairs are compared too: (arm, reference). v2-latest over v2 is what FastAPI's
# own upgrade is worth, with Pydantic unchanged.
EXTRA_COMPARISONS = (("v2-latest", "v2"),)
DEFAULT_PORTS = {name: arm.port for name, arm in ARMS.items()}
LOCUST_WEB_PORT = 8089


@dataclass(frozen=True)
class BenchmarkSettings:
    # Measured on the 2-vCPU machines (README, "Choosing the defaults"): 0.6 s windows paired
    # best; 1 s windows let the machine's speed drift between partners, 0.4 s ones lose too
    # much to settling. 2 x 30 pairs of three arms keep the default run under 8 minutes.
    window_s: float = 0.6  # one arm's turn; adjacent windows of different arms form a pair
    settle_s: float = 0.2  # the start of each window, not counted: users switch arms in it
    pairs: int = 30  # rounds (one window per arm) per scenario and repeat
    warmup_s: float = 2.0  # discarded, per arm, before each scenario's rounds
    repeats: int = 2  # fresh processes for every arm, each repeat
    users: int = 10  # the reference's `ab -c 10`
    startup_samples: int = 5  # fresh starts per arm, timed to the first 200 on /health
    dataset_size: int = 10_000
    apps: tuple[str, ...] = APP_NAMES
    scenarios: tuple[str, ...] = SCENARIO_NAMES
    workers: int = 1
    pin: bool = True
    load_processes: int = 1
    ports: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_PORTS))
    results_dir: Path = REPOSITORY_ROOT / "results"
    calibrate: bool = True
    docker: bool = False  # against docker-compose.yml instead of local processes
    cross_check: bool = False  # READ and READ synthetic again with wrk
    ui_port: int = LOCUST_WEB_PORT  # the up mode's locust web UI

    @property
    def baseline(self) -> str | None:
        return BASELINE if BASELINE in self.apps and len(self.apps) > 1 else None

    @property
    def comparisons(self) -> list[tuple[str, str]]:
        """(arm, reference) for every ratio the run reports: each arm over the baseline, then
        the extra comparisons whose arms both ran."""
        pairs = [(arm, self.baseline) for arm in self.apps if self.baseline not in (None, arm)]
        extra = [(a, b) for a, b in EXTRA_COMPARISONS if a in self.apps and b in self.apps]
        return pairs + extra  # type: ignore[return-value]


# --quick: a first look, for CI too.
# Three arms in under 2 minutes: about 25 s of load per scenario, 3 start-ups per arm.
QUICK_OVERRIDES = {"pairs": 10, "repeats": 1, "warmup_s": 1.0, "startup_samples": 3}


# `./test.sh ladder`, `micro` and `profile` (README, "Where the time goes") compare the two
# Pydantic majors unless --apps says otherwise.
WHERE_TIME_GOES_MODES = ("ladder", "micro", "profile")
WHERE_TIME_GOES_APPS = ("v1", "v2")
# Requests profiled per app and scenario by `./test.sh profile` (and with --quick).
PROFILE_REQUESTS = 2000
QUICK_PROFILE_REQUESTS = 500
# Rounds of the ladder (loadtest/ladder.py): each holds 4 windows per rung above response_model.
# 20 keep most intervals within about ±5-10% in about six minutes; 6 are the fewest with one.
LADDER_PAIRS = 20
LADDER_QUICK_PAIRS = 6
# One warm-up window per ladder arm, not counted: the apps are already running, and each route
# only needs its first requests (and Pydantic's first serialisation of its model) behind it.
LADDER_WARMUP_S = 0.5
