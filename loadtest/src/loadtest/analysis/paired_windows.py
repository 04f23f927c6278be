"""Ratios between slots over window records: a slot's window paired with the reference slot's
window of the same round (and repeat). In the benchmark a slot is an arm.

One rule for every paired mode: an empty window (no request served) is no pair, on either side;
analysis/flags.py's window_flags counts such windows and says their pairs are left out. A
ratio of 0 would say an arm is infinitely slower, which an app that served nothing in a window
(a crash, a stall) does not measure."""

import statistics
from collections.abc import Callable, Iterable

from loadtest.analysis.ratio import PairedRatio, keyed, paired_ratios
from loadtest.load.windows import WindowRecord

PairKey = tuple[int, int]  # (repeat, round)


def served_rps(record: WindowRecord) -> float | None:
    """The window's r/s, or None for an empty window: no pair (the module's one rule)."""
    return record.rps or None


def by_pair(
    records: Iterable[WindowRecord],
    scenario: str,
    slot: str,
    value: Callable[[WindowRecord], float | None] = served_rps,
) -> dict[PairKey, float]:
    """The slot's window values (r/s unless said) by (repeat, round): the key windows pair by."""
    return keyed(
        (record for record in records if record.scenario == scenario and record.slot == slot),
        key=lambda record: (record.repeat, record.round),
        value=value,
    )


def window_ratios(
    records: Iterable[WindowRecord],
    scenario: str,
    slot: str,
    reference: str,
    value: Callable[[WindowRecord], float | None] = served_rps,
) -> list[float]:
    """Per round, the slot's window value (r/s unless said) over the reference's window value
    in the same round."""
    records = list(records)
    return paired_ratios(
        by_pair(records, scenario, slot, value), by_pair(records, scenario, reference, value)
    )


def ratios_by_repeat(
    records: Iterable[WindowRecord],
    scenario: str,
    slot: str,
    reference: str,
    value: Callable[[WindowRecord], float | None] = served_rps,
) -> dict[int, list[float]]:
    """window_ratios per repeat, every repeat the records hold in order (a repeat without a
    pair as an empty list: the interval over repeats counts its pilot by repeat)."""
    by_repeat: dict[int, list[WindowRecord]] = {}
    for record in records:
        by_repeat.setdefault(record.repeat, []).append(record)
    return {
        repeat: window_ratios(by_repeat[repeat], scenario, slot, reference, value)
        for repeat in sorted(by_repeat)
    }


def window_ratio(
    records: Iterable[WindowRecord], scenario: str, slot: str, reference: str
) -> PairedRatio:
    return PairedRatio.from_pairs(window_ratios(records, scenario, slot, reference))


def by_group(
    records: Iterable[WindowRecord], slot: str, value: Callable[[WindowRecord], float | None]
) -> dict[int, float]:
    """The slot's window values by the group they ran in (their `round`: in the ladder, one
    rung's group; in the sweep, one cell's), the key a ratio between two slots pairs by."""
    return keyed(
        (record for record in records if record.slot == slot),
        key=lambda record: record.round,
        value=value,
    )


def median_of(
    records: Iterable[WindowRecord], value: Callable[[WindowRecord], float | None]
) -> float | None:
    """The median of the records' values (those that have one), or None."""
    values = [figure for record in records if (figure := value(record)) is not None]
    return statistics.median(values) if values else None
