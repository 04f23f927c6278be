"""compare's settings: the benchmark's (its defaults, its --quick), the file's plan in place of
the registry's, and what the file and the command line allow."""

from dataclasses import dataclass
from typing import ClassVar

from loadtest.analysis.clusters import MIN_REPEATS
from loadtest.load.plan import PairedPlan
from loadtest.modes.compare.file import ArmOptions, CompareFile
from loadtest.pipeline.settings import BenchmarkSettings

# compare's own defaults, where they differ from the benchmark's: a pilot of MIN_REPEATS
# repeats (each with fresh processes), then as many more as the widest ratio needs for the
# target precision, within the budget (analysis/clusters.py, docs/compare.md).
PILOT_REPEATS = MIN_REPEATS
PAIRS_PER_REPEAT = 6  # the fewest that give one repeat its own interval
PRECISION = 0.05  # the target: every ratio's 95% interval within ±5%
BUDGET_S = 600.0  # the whole run's, calibration and start-ups included


@dataclass(frozen=True)
class CompareSettings(BenchmarkSettings):
    file: CompareFile | None = None
    allow_different: bool = False  # time arms whose answers differ from the baseline's
    repeats: int = PILOT_REPEATS  # the pilot: more follow where the target needs them
    pairs: int = PAIRS_PER_REPEAT
    precision: float = PRECISION  # 0: no more repeats than the pilot
    budget_s: float = BUDGET_S
    fit: bool = True  # compare fits users, window and settle to the service unless --no-fit
    NOT_IN_RESULTS: ClassVar[tuple[str, ...]] = (
        *BenchmarkSettings.NOT_IN_RESULTS,
        "file",
        "docker",
        "cross_check",
        "ports",
    )

    @property
    def more_precision(self) -> str:
        """compare adds repeats itself until the target or the budget: the budget is the knob."""
        return "give a larger --budget (the target is --precision)"

    @property
    def interval_limit(self) -> float:
        """The target precision is the width flagged (--precision 0, as --quick sets it: the
        benchmark's ±5%)."""
        return self.precision or super().interval_limit

    @property
    def plan(self) -> PairedPlan:
        assert self.file is not None, "a compare run's settings come from its file"
        return self.file.plan

    @property
    def arm_options(self) -> dict[str, ArmOptions]:
        assert self.file is not None, "a compare run's settings come from its file"
        return self.file.arm_options

    def reads_process(self, arm: str) -> bool:
        """Whether the harness starts the arm's own process, pinned, and reads its CPU, memory
        and start-up (not an arm reached by URL, nor one a launcher such as docker run starts)."""
        return self.plan.service(arm).started_here and self.arm_options[arm].own_process
