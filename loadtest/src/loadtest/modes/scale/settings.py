"""The scale mode's settings: which shape, which arms, which sizes, how many fresh processes,
how long a process may take, where results go."""

from dataclasses import dataclass, field
from pathlib import Path

from loadtest.generated.shapes import DEFAULT_SHAPE, SHAPES
from loadtest.lab.arms import DEFAULT_ARMS
from loadtest.lab.paths import DEFAULT_RESULTS_DIR

MODEL_COUNTS = SHAPES[DEFAULT_SHAPE].sizes
MAX_MODELS = SHAPES[DEFAULT_SHAPE].max_size


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
    shape: str = DEFAULT_SHAPE
    sizes: tuple[int, ...] = MODEL_COUNTS  # the shape's: models, union members, routes a model
    defer_build: bool = True
    flat: bool = False
    variants: tuple[str, ...] = ()  # the shape's variants measured beside it
    quick: bool = False
    plan: ScalePlan = field(default_factory=lambda: DEFAULT_PLAN)
    seed: int = 0
    bound_s: float = SHAPES[DEFAULT_SHAPE].bound_s  # a process over it is "over", not timed
    ports: dict[str, int] = field(default_factory=dict)
    pin: bool = True
    results_dir: Path = DEFAULT_RESULTS_DIR
