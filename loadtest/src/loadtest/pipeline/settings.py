"""The benchmark's settings: the defaults and the --quick preset."""

from dataclasses import dataclass
from typing import ClassVar

from loadtest.analysis.limits import CI_HALF_WIDTH_LIMIT
from loadtest.load.plan import PairedPlan, plan_lab_arms
from loadtest.load.scenarios import DEFAULT_SCENARIOS, SCENARIOS
from loadtest.load.settings import PairedLoadSettings


@dataclass(frozen=True)
class BenchmarkSettings(PairedLoadSettings):
    # 5 repeats x 8 pairs of three arms: every ratio's interval is over repeats, and covers
    # what a rerun varies (analysis/clusters.py), in under 8 minutes (docs/methodology.md).
    repeats: int = 5  # fresh processes for every arm, each repeat
    pairs: int = 8  # per repeat: each repeat's median is one value of the interval's five
    startup_samples: int = 5  # fresh starts per arm, timed to the first 200 on /health
    dataset_size: int = 10_000
    scenarios: tuple[str, ...] = DEFAULT_SCENARIOS
    docker: bool = False  # against docker-compose.yml instead of local processes
    cross_check: bool = False  # READ and READ synthetic again with wrk
    # --fit: users, window and settle fitted to the arms per scenario first (analysis/fit.py).
    fit: bool = False
    # Of users, window_s and settle_s: those the file or the command line set (kept as set).
    set_by_hand: tuple[str, ...] = ()
    # Settings results.json leaves out (where the run went, and what its flags already say).
    NOT_IN_RESULTS: ClassVar[tuple[str, ...]] = ("results_dir", "pin", "calibrate")
    # What the progress line calls one fresh start of the arms (the versions mode: a step).
    REPEAT_WORD: ClassVar[str] = "repeat"

    @property
    def plan(self) -> PairedPlan:
        """The arms and the scenarios the run loads them with, and the ratios it reports."""
        return plan_lab_arms(
            self.apps, tuple(SCENARIOS[name] for name in self.scenarios), self.ports, self.workers
        )

    @property
    def more_precision(self) -> str:
        """How a reader of this mode gets narrower intervals, said in the flags of wide ones."""
        return "add pairs (--pairs, --repeats)"

    @property
    def interval_limit(self) -> float:
        """The widest 95% interval not flagged (0.05: ±5%)."""
        return CI_HALF_WIDTH_LIMIT

    @property
    def baseline(self) -> str | None:
        return self.plan.baseline

    @property
    def comparisons(self) -> list[tuple[str, str]]:
        """(arm, reference) for every ratio the run reports."""
        return list(self.plan.comparisons)


# --quick: a first look, for CI too.
# Three arms in under 2 minutes: about 25 s of load per scenario, 3 start-ups per arm.
QUICK = BenchmarkSettings(pairs=10, repeats=1, warmup_s=1.0, startup_samples=3)
