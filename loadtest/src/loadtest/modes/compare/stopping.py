"""When a compare run stops adding repeats. The first `repeats` are the pilot; from its repeats
every ratio plans how many it needs for `precision` (analysis/clusters.py: one look, after the
pilot). Repeats are added until the ratio that needs most has them, or until another would not
fit in the budget (judged by the mean repeat so far). Every ratio then records how it stopped:
"precision" (it had the repeats it needed), "budget" (it did not), or "fixed" (no target: the
pilot only, --quick, or a pilot too small to plan from)."""

from dataclasses import dataclass, field
from typing import Any

from loadtest.analysis.clusters import MIN_REPEATS, repeats_needed
from loadtest.analysis.paired_windows import ratios_by_repeat
from loadtest.lab.progress import ProgressDisplay
from loadtest.load.windows import WindowRecord
from loadtest.modes.compare.settings import CompareSettings

RatioKey = tuple[str, str, str]  # scenario, arm, reference


@dataclass
class Stopping:
    settings: CompareSettings
    needed: dict[RatioKey, int] = field(default_factory=dict)
    repeats: int = 0
    repeats_began_s: float | None = None
    probing_s: float = 0.0  # the first repeat's probes (analysis/fit.py): not a repeat's
    pilot_over_budget_s: float | None = None  # where the pilot alone was expected past it
    stopped: str = "fixed"

    @property
    def plans(self) -> bool:
        """Whether the run adds repeats at all: a target, and a pilot a target can be planned
        from."""
        return self.settings.precision > 0 and self.settings.repeats >= MIN_REPEATS

    def another_repeat(
        self, done: int, windows: list[WindowRecord], elapsed_s: float, progress: ProgressDisplay
    ) -> bool:
        """Whether to run repeat done + 1, `elapsed_s` into the run, from the windows measured
        so far."""
        self.repeats = done
        if self.repeats_began_s is None:
            self.repeats_began_s = elapsed_s
        per_repeat = (elapsed_s - self.repeats_began_s - self.probing_s) / max(done, 1)
        if self.plans and done == 1 < self.settings.repeats:
            expected = elapsed_s + (self.settings.repeats - 1) * per_repeat
            if expected > self.settings.budget_s:
                self.pilot_over_budget_s = expected
                progress.note(
                    f"the pilot of {self.settings.repeats} repeats will take about "
                    f"{expected / 60:.0f} min, past the budget of "
                    f"{self.settings.budget_s / 60:g} min: it runs whole (the interval over "
                    "repeats needs them), and no repeat will fit after it; give a larger "
                    "--budget, fewer scenarios or shorter windows next time"
                )
        if done < self.settings.repeats:
            return True
        if not self.plans:
            return False
        if done == self.settings.repeats:
            self.needed = plan(self.settings, windows)
            most = max(self.needed.values(), default=done)
            if most > done:
                progress.note(
                    f"pilot of {done} repeats: the widest ratio needs {most} for "
                    f"±{self.settings.precision:.0%}; adding up to {most - done} more within "
                    f"the budget ({self.settings.budget_s / 60:g} min)"
                )
        if not self.needed:  # no ratio could be planned (no pairs in enough repeats)
            return False
        most = max(self.needed.values())
        if done >= most:
            self.stopped = "precision"
            return False
        if elapsed_s + per_repeat > self.settings.budget_s:
            self.stopped = "budget"
            progress.note(
                f"stopping at {done} repeats: another (about {per_repeat:.0f} s) would pass "
                f"the budget of {self.settings.budget_s / 60:g} min; {most} were needed"
            )
            return False
        return True

    def ratio_stopped(self, key: RatioKey, repeats_with_pairs: int | None = None) -> str:
        """How the ratio stopped: "precision" if the repeats in which it had pairs (all the run
        had, unless said) reached what it needed, else "budget"; "fixed" with nothing planned."""
        if not self.plans or key not in self.needed:
            return "fixed"
        had = self.repeats if repeats_with_pairs is None else repeats_with_pairs
        return "precision" if self.needed[key] <= had else "budget"

    def as_dict(self) -> dict[str, Any]:
        return {
            "precision": self.settings.precision,
            "budget_s": self.settings.budget_s,
            "pilot_repeats": self.settings.repeats,
            "repeats": self.repeats,
            "repeats_needed": max(self.needed.values(), default=None),
            "pilot_over_budget_s": None
            if self.pilot_over_budget_s is None
            else round(self.pilot_over_budget_s),
            "stopped": self.stopped,
        }


def plan(settings: CompareSettings, windows: list[WindowRecord]) -> dict[RatioKey, int]:
    """Each ratio's repeats needed for the target, from the pilot's windows (a ratio without
    pairs in enough repeats, such as an arm that failed verification, plans nothing)."""
    needed = {}
    for scenario in settings.scenarios:
        for arm, reference in settings.comparisons:
            clusters = ratios_by_repeat(windows, scenario, arm, reference).values()
            count = repeats_needed([pairs for pairs in clusters if pairs], settings.precision)
            if count is not None:
                needed[(scenario, arm, reference)] = count
    return needed
