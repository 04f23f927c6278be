"""The scale mode's settings: which arms, which sizes, how many fresh processes, where results
go."""

from dataclasses import dataclass, field
from pathlib import Path

from loadtest.lab.arms import DEFAULT_ARMS
from loadtest.lab.paths import DEFAULT_RESULTS_DIR

MODEL_COUNTS = (10, 100, 500)
MAX_MODELS = 2000  # a bigger app takes minutes per start on the 2-vCPU machines


@dataclass(frozen=True)
class ScalePlan:
    """Timed fresh processes per subject and app size (after one that verifies the app)."""

    processes: int


# 6 pairs, the fewest for which a median's 95% interval exists (analysis/stats.py): about 6
# minutes for the three default arms, their two defer_build variants and M = 10, 100, 500 on the
# 2-vCPU machines (a process of the biggest app takes 3-8 s: start, every route, OpenAPI).
DEFAULT_PLAN = ScalePlan(processes=6)
# One timed process per subject and size after its verification: about a minute and a half.
QUICK_PLAN = ScalePlan(processes=1)


@dataclass(frozen=True)
class ScaleSettings:
    apps: tuple[str, ...] = DEFAULT_ARMS
    models: tuple[int, ...] = MODEL_COUNTS
    defer_build: bool = True
    flat: bool = False
    quick: bool = False
    plan: ScalePlan = field(default_factory=lambda: DEFAULT_PLAN)
    seed: int = 0
    ports: dict[str, int] = field(default_factory=dict)
    pin: bool = True
    results_dir: Path = DEFAULT_RESULTS_DIR
