"""The workers mode's settings: which apps (a generated app of scale's shapes, or the lab's
own), which arms, servers and worker counts, how many rounds, and the memory limits the fit is
read at."""

from dataclasses import dataclass, field
from pathlib import Path

from loadtest.generated.shapes import DEFAULT_SHAPE, SHAPES
from loadtest.lab.paths import DEFAULT_RESULTS_DIR

DEFAULT_APPS = ("v1", "v2")
DEFAULT_SERVERS = ("uvicorn", "gunicorn-preload", "gunicorn-preload-freeze")
DEFAULT_WORKERS = (1, 2, 4)
QUICK_WORKERS = (2, 4)  # two counts of several workers: what the fit needs
MAX_WORKERS = 32  # also the most the limit check starts
DEFAULT_SIZES = (100,)
# Three rounds: memory moves by well under 1% from one process to the next (docs/workers.md),
# so medians and ranges of three say it; 6 rounds (--rounds 6) give the ratios 95% intervals.
DEFAULT_ROUNDS = 3
LIMITS_MIB = (512, 1024, 2048)
CHECK_LIMIT_MIB = 512
LOAD_S = 10.0  # the limit check's load, after every route has run in every worker
QUICK_LOAD_S = 3.0
LAB_APP = "lab"  # the target name of the lab's own app


@dataclass(frozen=True)
class Target:
    """What the workers serve: a generated app (scale's shape and size) or the lab's own."""

    shape: str = DEFAULT_SHAPE
    size: int = 100
    lab: bool = False

    @property
    def name(self) -> str:
        if self.lab:
            return LAB_APP
        label = SHAPES[self.shape].size_label  # "union members" names its shape already
        prefix = "" if self.shape == DEFAULT_SHAPE or self.shape in label else f"{self.shape} "
        return f"{prefix}{self.size} {label}"


@dataclass(frozen=True)
class WorkersSettings:
    apps: tuple[str, ...] = DEFAULT_APPS
    targets: tuple[Target, ...] = (Target(),)
    servers: tuple[str, ...] = DEFAULT_SERVERS
    workers: tuple[int, ...] = DEFAULT_WORKERS
    rounds: int = DEFAULT_ROUNDS
    quick: bool = False
    limits_mib: tuple[int, ...] = LIMITS_MIB
    check_limit_mib: int | None = CHECK_LIMIT_MIB  # None: no limit check
    load_s: float = LOAD_S
    bound_s: float = 60.0
    seed: int = 0
    ports: dict[str, int] = field(default_factory=dict)
    pin: bool = True
    results_dir: Path = DEFAULT_RESULTS_DIR
