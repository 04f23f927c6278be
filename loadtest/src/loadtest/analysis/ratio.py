"""The one paired ratio: formed pair by pair (two windows, rounds or measurements taken
seconds apart, so the machine's drift cancels), published as the median of the pairs with its
exact 95% confidence interval. Every mode's results.json writes ratios with `as_dict`, and
every report reads them back with `from_dict`."""

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from loadtest.analysis.clusters import CLUSTER_METHOD, POOLED_METHOD, cluster_interval
from loadtest.analysis.limits import CI_HALF_WIDTH_LIMIT, within_text
from loadtest.analysis.stats import MIN_PAIRS_FOR_CI, ci_half_width, median_with_ci

Key = TypeVar("Key", bound=Hashable)
Item = TypeVar("Item")
SIGNIFICANT_DIGITS = 4


def significant(value: float | None, digits: int = SIGNIFICANT_DIGITS) -> float | None:
    """`value` to a few significant digits (2.0213 -> 2.021, 0.012345 -> 0.01235)."""
    if value is None or value == 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


@dataclass(frozen=True)
class PairedRatio:
    """The median of paired ratios and its exact 95% CI, or with 5 repeats or more, the ratio
    over the repeats and its t interval (analysis/clusters.py); None where there is no figure."""

    estimate: float | None
    ci95_low: float | None
    ci95_high: float | None
    pairs: int
    pair_min: float | None = None
    pair_max: float | None = None
    method: str = POOLED_METHOD
    # The widest interval not flagged, relative (0.05: ±5%): compare's --precision, where set.
    limit: float = CI_HALF_WIDTH_LIMIT

    @classmethod
    def from_pairs(
        cls, ratios: Sequence[float], limit: float = CI_HALF_WIDTH_LIMIT
    ) -> "PairedRatio":
        median, low, high = median_with_ci(list(ratios))
        return cls(
            median,
            low,
            high,
            len(ratios),
            min(ratios, default=None),
            max(ratios, default=None),
            limit=limit,
        )

    @classmethod
    def from_repeats(
        cls,
        repeats: Sequence[Sequence[float]],
        pilot: int | None = None,
        limit: float = CI_HALF_WIDTH_LIMIT,
    ) -> "PairedRatio":
        """Pairs grouped by the repeat they ran in: the interval that covers a rerun where
        there are enough repeats (the first `pilot` of them planned the rest), else the pooled
        pairs' median and interval."""
        pooled = [ratio for pairs in repeats for ratio in pairs]
        interval = cluster_interval(repeats, pilot)
        if interval is None:
            return cls.from_pairs(pooled, limit)
        return cls(
            *interval, len(pooled), min(pooled), max(pooled), method=CLUSTER_METHOD, limit=limit
        )

    @property
    def half_width(self) -> float | None:
        """The interval's larger side relative to the estimate (0.05: within ±5%)."""
        return ci_half_width(self.estimate, self.ci95_low, self.ci95_high)

    @property
    def flags(self) -> tuple[str, ...]:
        """What is wrong with the interval, in a few words (no figure at all is no flag: the
        windows behind it are flagged)."""
        if not self.estimate:
            return ()
        width = self.half_width
        if width is None:
            return (f"{self.pairs} pairs are too few for a 95% interval (need {MIN_PAIRS_FOR_CI})",)
        if width > self.limit:
            return (f"95% CI ±{width:.1%} is wider than {within_text(self.limit)}",)
        return ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "estimate": significant(self.estimate),
            "ci95_low": significant(self.ci95_low),
            "ci95_high": significant(self.ci95_high),
            "ci95_half_width": significant(self.half_width, 3),
            "pairs": self.pairs,
            "pair_min": significant(self.pair_min),
            "pair_max": significant(self.pair_max),
            "method": self.method,
            "flags": list(self.flags),
        }

    @classmethod
    def from_dict(
        cls, figures: Mapping[str, Any], limit: float = CI_HALF_WIDTH_LIMIT
    ) -> "PairedRatio":
        return cls(
            figures["estimate"],
            figures["ci95_low"],
            figures["ci95_high"],
            figures["pairs"],
            figures.get("pair_min"),
            figures.get("pair_max"),
            figures.get("method", POOLED_METHOD),
            limit,
        )


def keyed(
    items: Iterable[Item], key: Callable[[Item], Key], value: Callable[[Item], float | None]
) -> dict[Key, float]:
    """Each item's value by its pairing key (a record's repeat and round, a process's round);
    items without a value are left out."""
    found = {}
    for item in items:
        figure = value(item)
        if figure is not None:
            found[key(item)] = figure
    return found


def ratios_by_key(
    numerators: Mapping[Key, float], denominators: Mapping[Key, float]
) -> dict[Key, float]:
    """numerator / denominator for every key both have, in key order (a zero denominator is no
    pair)."""
    shared = sorted(numerators.keys() & denominators.keys())  # type: ignore[type-var]
    return {key: numerators[key] / denominators[key] for key in shared if denominators[key]}


def paired_ratios(
    numerators: Mapping[Key, float], denominators: Mapping[Key, float]
) -> list[float]:
    return list(ratios_by_key(numerators, denominators).values())


def paired_ratio(numerators: Mapping[Key, float], denominators: Mapping[Key, float]) -> PairedRatio:
    return PairedRatio.from_pairs(paired_ratios(numerators, denominators))
