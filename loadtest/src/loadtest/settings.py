"""Benchmark settings: the defaults, the --quick preset, and where things live."""

from dataclasses import dataclass, field
from pathlib import Path

from loadtest.scenarios import SCENARIO_NAMES

REPOSITORY_ROOT = Path(__file__).resolve().parents[3]
APP_NAMES = ("v1", "v2")
DEFAULT_PORTS = {"v1": 8001, "v2": 8002}
LOCUST_WEB_PORT = 8089


@dataclass(frozen=True)
class BenchmarkSettings:
    duration_s: float = 15.0
    warmup_s: float = 5.0
    users: int = 10  # the reference's `ab -c 10`
    repeats: int = 3
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


# --quick: one short repeat per cell, for a first look and for CI.
QUICK_OVERRIDES = {"duration_s": 8.0, "warmup_s": 2.0, "repeats": 1}
