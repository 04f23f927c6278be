"""Ratios between arms over window records: an arm's window paired with the reference arm's
window of the same round (and repeat)."""

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
