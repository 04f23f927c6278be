"""Ratios between arms over window records: an arm's window paired with the reference arm's
window of the same round (and repeat)."""

import statistics
from collections.abc import Callable, Iterable

from loadtest.analysis.ratio import PairedRatio, keyed, paired_ratios
from loadtest.load.windows import WindowRecord

PairKey = tuple[int, int]  # (repeat, round)


def by_pair(
    records: Iterable[WindowRecord],
    scenario: str,
    arm: str,
    value: Callable[[WindowRecord], float | None] = lambda record: record.rps,
) -> dict[PairKey, float]:
    """The arm's window values (r/s unless said) by (repeat, round): the key windows pair by."""
    return keyed(
        (record for record in records if record.scenario == scenario and record.arm == arm),
        key=lambda record: (record.repeat, record.round),
        value=value,
    )


def window_ratios(
    records: Iterable[WindowRecord], scenario: str, arm: str, reference: str
) -> list[float]:
    """Per round, the arm's window r/s over the reference's window r/s in the same round."""
    records = list(records)
    return paired_ratios(by_pair(records, scenario, arm), by_pair(records, scenario, reference))


def window_ratio(
    records: Iterable[WindowRecord], scenario: str, arm: str, reference: str
) -> PairedRatio:
    return PairedRatio.from_pairs(window_ratios(records, scenario, arm, reference))


def by_group(
    records: Iterable[WindowRecord], arm: str, value: Callable[[WindowRecord], float | None]
) -> dict[int, float]:
    """The arm's window values by the group they ran in (their `round`: in the ladder, one
    rung's group; in the sweep, one cell's), the key a ratio between two arms pairs by."""
    return keyed(
        (record for record in records if record.arm == arm),
        key=lambda record: record.round,
        value=value,
    )


def median_of(
    records: Iterable[WindowRecord], value: Callable[[WindowRecord], float | None]
) -> float | None:
    """The median of the records' values (those that have one), or None."""
    values = [figure for record in records if (figure := value(record)) is not None]
    return statistics.median(values) if values else None
