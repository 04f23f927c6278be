"""Statistics: medians, and the median's exact confidence interval (for the paired ratios)."""

import math
import statistics


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
    from scipy.stats import quantile_test  # a second to import: only where an interval is due

    interval = quantile_test(values, q=median, p=0.5).confidence_interval(confidence)
    low, high = float(interval.low), float(interval.high)
    if not (math.isfinite(low) and math.isfinite(high)):  # no interval at this confidence
        return median, None, None
    return median, low, high


def ci_half_width(median: float | None, low: float | None, high: float | None) -> float | None:
    """The larger side of the interval, relative to the median (0.05: within ±5%)."""
    if median is None or low is None or high is None or median == 0:
        return None
    return max(median - low, high - median) / median
