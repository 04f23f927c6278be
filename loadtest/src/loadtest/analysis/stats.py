"""Statistics: medians, and the median's exact confidence interval (for the paired ratios)."""

import functools
import math
import statistics
from fractions import Fraction


def round_or_none(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def summarize(values: list[float]) -> dict[str, float | None]:
    """Median, min and max; None everywhere when there is nothing to summarise."""
    if not values:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


# The smallest sample for which a 95% distribution-free interval for the median exists:
# with n = 6 it is (smallest, largest), covering 1 - 2 / 2**6 = 96.9%.
MIN_PAIRS_FOR_CI = 6


def median_with_ci(
    values: list[float], confidence: float = 0.95
) -> tuple[float | None, float | None, float | None]:
    """Median and its exact, distribution-free confidence interval (order statistics: the
    interval between the j-th smallest and j-th largest value, with j from the binomial
    distribution, as scipy.stats.quantile_test computes it). No interval below 6 values."""
    if not values:
        return None, None, None
    median = statistics.median(values)
    if len(values) < MIN_PAIRS_FOR_CI:
        return median, None, None
    low_rank, high_rank = median_interval_ranks(len(values), confidence)
    ordered = sorted(values)
    if low_rank < 0 or high_rank >= len(values):  # no interval at this confidence
        return median, None, None
    return median, float(ordered[low_rank]), float(ordered[high_rank])


@functools.cache
def median_interval_ranks(n: int, confidence: float) -> tuple[int, int]:
    """Where the median's interval ends among n sorted values (0-based; -1 or n where it has
    no end at this confidence): scipy.stats.quantile_test's order statistics (p = 1/2,
    two-sided), from binomial(n, 1/2)'s tails in exact integer arithmetic. The low end is
    ppf(tail) - 1, the high end isf(tail): the smallest k with P(X <= k) >= tail, and the
    smallest k with P(X > k) <= tail, which by symmetry is n - 1 minus the largest k with
    P(X <= k) <= tail. (scipy.stats costs a second to import, in every process that prints a
    ratio: analysis/test_stats.py checks these ranks against it.)"""
    tail = Fraction((1 - confidence) / 2)  # the float scipy is given, exactly
    total = 2**n
    cumulative = 0  # P(X <= k) * 2**n
    ppf = largest_within = None
    for k in range(n + 1):
        cumulative += math.comb(n, k)
        if ppf is None and Fraction(cumulative, total) >= tail:
            ppf = k
        if Fraction(cumulative, total) <= tail:
            largest_within = k
    assert ppf is not None  # P(X <= n) = 1
    isf = n if largest_within is None else n - 1 - largest_within
    return ppf - 1, isf


def ci_half_width(median: float | None, low: float | None, high: float | None) -> float | None:
    """The larger side of the interval, relative to the median (0.05: within ±5%)."""
    if median is None or low is None or high is None or median == 0:
        return None
    return max(median - low, high - median) / median
