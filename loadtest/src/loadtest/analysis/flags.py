"""Flags: what the records say about a run that a reader must know before trusting a number.
Every mode raises them from the same checks; the limits are in limits.py."""

from collections.abc import Sequence

from loadtest.analysis.limits import (
    CI_HALF_WIDTH_LIMIT,
    FOREIGN_LIMIT,
    LOCUST_CPU_LIMIT_PERCENT,
    NAMED_RATIOS_LIMIT,
    SPILL_LIMIT,
    SPILL_WINDOWS_LIMIT,
    within_text,
)
from loadtest.analysis.ratio import PairedRatio
from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.load.locust_runs import LocustRun
from loadtest.load.windows import WindowRecord


def window_flags(windows: Sequence[WindowRecord]) -> list[str]:
    """What the windows of one arm say about the run: empty windows, other programs on the
    app's CPU, the previous arm's requests spilling into the counted span."""
    flags = []
    empty = [record for record in windows if record.successes == 0]
    if empty:
        flags.append(
            f"{len(empty)} of {len(windows)} windows served no request (their pairs are left "
            "out); see the app's log"
        )
    spans = [
        (record.other_arms_cpu_s, record.cpu_span_s)
        for record in windows
        if record.other_arms_cpu_s is not None and record.cpu_span_s
    ]
    spilled = [other / span for other, span in spans if other > SPILL_LIMIT * span]
    foreign = [
        record.foreign_cpu_s / record.cpu_span_s
        for record in windows
        if record.foreign_cpu_s is not None and record.cpu_span_s
    ]
    crowded = [share for share in foreign if share > FOREIGN_LIMIT]
    if foreign and len(crowded) > SPILL_WINDOWS_LIMIT * len(foreign):
        flags.append(
            f"in {len(crowded)} of {len(foreign)} windows other programs used the app's CPU (up "
            f"to {max(crowded):.0%} of it): something else is running (another ./test.sh?); "
            "stop it and rerun"
        )
    if spans and len(spilled) > SPILL_WINDOWS_LIMIT * len(spans):
        flags.append(
            f"in {len(spilled)} of {len(spans)} windows another arm was still busy (up to "
            f"{max(spilled):.0%} of a CPU): the previous arm's requests outlast the settling "
            "time; use fewer --users"
        )
    return flags


def locust_flags(locust: LocustRun, load_cores: int, where: str) -> list[str]:
    """The load generator near its limit: then the windows measured locust, not the app."""
    flags = []
    if locust.cpu_warnings:
        flags.append(f"{where}: load generator CPU-bound ({locust.cpu_warnings} locust warnings)")
    if locust.cpu_percent > LOCUST_CPU_LIMIT_PERCENT * load_cores:
        flags.append(
            f"{where}: load generator near its limit (locust at {locust.cpu_percent:.0f}% CPU)"
        )
    return flags


def ratio_flags(
    labelled: Sequence[tuple[str, PairedRatio]], remedy: str, limit: float = CI_HALF_WIDTH_LIMIT
) -> list[str]:
    """One line for the ratios with too few pairs for an interval, one for those whose interval
    is too wide (a --quick run on a busy hour flags most of them, and a line each would say one
    thing many times). Up to NAMED_RATIOS_LIMIT are named; beyond, counted, widest first.
    `remedy` is the mode's way to more pairs, e.g. "add pairs (--pairs, --repeats)"; `limit`
    the widest interval not flagged (the ratios' own, from compare's --precision)."""
    flagged = [(label, ratio) for label, ratio in labelled if ratio.flags]
    few = [label for label, ratio in flagged if ratio.half_width is None]
    wide = sorted(
        ((width, label) for label, ratio in flagged if (width := ratio.half_width) is not None),
        reverse=True,
    )
    flags = []
    if few:
        which = (
            ", ".join(few)
            if len(few) <= NAMED_RATIOS_LIMIT
            else f"{len(few)} of {len(labelled)} ratios"
        )
        flags.append(
            f"{which}: too few pairs for a 95% interval (need {MIN_PAIRS_FOR_CI}); {remedy}"
        )
    if wide:
        named = [f"{label} ±{width:.1%}" for width, label in wide]
        which = (
            f"95% CI wider than {within_text(limit)}: {', '.join(named)}"
            if len(wide) <= NAMED_RATIOS_LIMIT
            else f"{len(wide)} of {len(labelled)} ratios have a 95% CI wider than "
            f"{within_text(limit)} (widest: {', '.join(named[:3])})"
        )
        flags.append(
            f"{which}. The machine's speed moved within the pairs, or there were too few of "
            f"them; rerun when it is quieter, or {remedy} to narrow them"
        )
    return flags
