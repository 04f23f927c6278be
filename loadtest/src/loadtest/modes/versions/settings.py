"""The versions mode's settings: the benchmark's paired protocol, one step of a series at a
time (three arms: v1, the version before, the version; four for a --python step: v1 and v2 on
each of its two Pythons)."""

from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import ClassVar

from loadtest.lab.arms import (
    FASTAPI_SERIES,
    PYDANTIC_2_SERIES,
    PYDANTIC_MINORS,
    VERSION_ARMS,
    arm_named,
)
from loadtest.load.settings import default_ports
from loadtest.pipeline.settings import BenchmarkSettings


def series_ports() -> dict[str, int]:
    return default_ports() | {name: arm.port for name, arm in VERSION_ARMS.items()}


# The minors by what the command line calls them (`2.7` ... `2.14`).
MINORS = PYDANTIC_MINORS
# --quick: the first minor, the one that rebuilt model construction, and the lab's own; and
# FastAPI from app_v2's line (the last with Pydantic 1) straight to the latest.
QUICK_MINORS = ("2.7", "2.11", "2.14")
QUICK_FASTAPI = (FASTAPI_SERIES[0], FASTAPI_SERIES[-1])


def baseline_of(arm: str) -> str:
    """The arm its ratios are over: v1, or v1 on the arm's own interpreter (--python)."""
    return arm_named(arm).baseline


def arms_of(chains: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    """Every arm the chains walk, each after its baseline, each once, in order: v1 first."""
    walked = [arm for chain in chains for arm in chain]
    return tuple(dict.fromkeys(name for arm in walked for name in (baseline_of(arm), arm)))


@dataclass(frozen=True)
class VersionsSettings(BenchmarkSettings):
    # The series walked, each oldest first, by arm (commons/arms.py): a step pairs an arm with
    # the one before it in its chain.
    chains: tuple[tuple[str, ...], ...] = (PYDANTIC_2_SERIES,)
    # Per step: one repeat of 10 rounds of three windows per scenario, about 80 s a step, so
    # the seven steps of the minors and the start-ups take about 10 minutes. The interval is
    # over one repeat's pairs: narrower than what a rerun varies (docs/versions.md). A second
    # of warm-up per arm and scenario where the benchmark has two: each step starts its arms
    # afresh, and their first requests are behind them within a second.
    pairs: int = 10
    repeats: int = 1
    warmup_s: float = 1.0
    startup_samples: int = 3
    # The generated app started on every arm (generated.py): its size, 0 to leave it out, and
    # its rounds of fresh starts (a 500-model start takes 5 to 8 s here: two rounds of nine
    # arms add about two and a half minutes).
    generated_models: int = 500
    generated_rounds: int = 2
    apps: tuple[str, ...] = arms_of((PYDANTIC_2_SERIES,))
    ports: dict[str, int] = field(default_factory=series_ports)
    REPEAT_WORD: ClassVar[str] = "step"

    @property
    def steps(self) -> list[tuple[str, str]]:
        """(the version before, the version) along each chain."""
        return [step for chain in self.chains for step in pairwise(chain)]

    def for_step(self, step: tuple[str, str]) -> "VersionsSettings":
        """The settings one step runs on: the baselines of its two arms (v1, or v1 on each
        one's Python) and the step's two arms. Its repeats count the steps, so each step's
        windows pair only with their own (the repeat is the step's number)."""
        arms = tuple(dict.fromkeys((*map(baseline_of, step), *step)))
        return replace(self, apps=arms, repeats=len(self.steps))


def with_chains(settings: VersionsSettings, *chains: tuple[str, ...]) -> VersionsSettings:
    return replace(settings, chains=chains, apps=arms_of(chains))


QUICK = with_chains(
    VersionsSettings(pairs=6, startup_samples=2, generated_rounds=1),
    tuple(MINORS[minor] for minor in QUICK_MINORS),
    QUICK_FASTAPI,
)
