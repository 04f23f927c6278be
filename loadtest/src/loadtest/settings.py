"""Benchmark settings: the defaults, the --quick preset, and where things live."""

from dataclasses import dataclass, field
from pathlib import Path

from loadtest.scenarios import SCENARIO_NAMES

REPOSITORY_ROOT = Path(__file__).resolve().parents[3]
APP_NAMES = ("v1", "v2")
BASELINE = "v1"  # every ratio is an arm's figure over this arm's
DEFAULT_PORTS = {"v1": 8001, "v2": 8002}
LOCUST_WEB_PORT = 8089


@dataclass(frozen=True)
class BenchmarkSettings:
    # Measured on the 2-vCPU machines (README, "Choosing the defaults"): 0.6 s windows paired
    # best; 1 s windows let the machine's speed drift between partners, 0.4 s ones lose too
    # much to settling. 2 x 50 pairs keep the default run under 8 minutes.
    window_s: float = 0.6  # one arm's turn; adjacent windows of different arms form a pair
    settle_s: float = 0.2  # the start of each window, not counted: users switch arms in it
    pairs: int = 50  # rounds (one window per arm) per scenario and repeat
    warmup_s: float = 2.0  # discarded, per arm, before each scenario's rounds
    repeats: int = 2  # fresh processes for every arm, each repeat
    users: int = 10  # the reference's `ab -c 10`
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

    @property
    def baseline(self) -> str | None:
        return BASELINE if BASELINE in self.apps and len(self.apps) > 1 else None


# --quick: a first look, for CI too.
QUICK_OVERRIDES = {"pairs": 16, "repeats": 1, "warmup_s": 1.0}
