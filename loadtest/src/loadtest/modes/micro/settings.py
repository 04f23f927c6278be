"""The micro mode's settings: which arms, how much to measure, where results go."""

from dataclasses import dataclass, field
from pathlib import Path

from loadtest.lab.paths import DEFAULT_RESULTS_DIR

# The micro mode compares the two Pydantic majors unless --apps says otherwise.
MICRO_APPS = ("v1", "v2")


@dataclass(frozen=True)
class MicroPlan:
    """How much to measure: processes per environment, rounds per process and group, and the
    least time of one measurement (its calibrated loops)."""

    processes: int
    rounds: int
    min_time_s: float

    @property
    def pairs(self) -> int:
        return self.processes * self.rounds


# Short measurements pair best on a machine that drifts within seconds: a Pydantic round (9
# measurements) lasts about half a second, a container round (14) under a second. An even
# number of processes, so each arm runs first as often as the other (plan_jobs); about two
# minutes in all on the 2-vCPU machines (6 x 6 took three on a busy hour).
DEFAULT_PLAN = MicroPlan(processes=4, rounds=8, min_time_s=0.05)
# 6 pairs: the fewest for which a 95% interval of the median exists (analysis/stats.py).
QUICK_PLAN = MicroPlan(processes=2, rounds=3, min_time_s=0.02)


@dataclass(frozen=True)
class MicroSettings:
    apps: tuple[str, ...] = MICRO_APPS
    quick: bool = False
    plan: MicroPlan = field(default_factory=lambda: DEFAULT_PLAN)
    pin: bool = True
    results_dir: Path = DEFAULT_RESULTS_DIR
