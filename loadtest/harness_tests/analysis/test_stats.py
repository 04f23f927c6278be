"""Statistics: medians and the median's exact interval."""

import math
import statistics

import pytest

from loadtest.analysis.stats import (
    ci_half_width,
    median_interval_ranks,
    median_with_ci,
    summarize,
)


def test_summarize_gives_median_min_max() -> None:
    assert summarize([3.0, 1.0, 2.0, 10.0]) == {"median": 2.5, "min": 1.0, "max": 10.0}
    assert summarize([]) == {"median": None, "min": None, "max": None}


def test_median_ci_is_the_exact_order_statistic_interval() -> None:
    # n = 10: P(Binomial(10, 1/2) <= 1) = 11/1024, so (2nd smallest, 2nd largest) covers
    # 1 - 22/1024 = 97.9% >= 95%, and (3rd, 3rd) would cover only 89.1%.
    values = [3.1, 2.9, 3.0, 3.3, 2.7, 3.2, 2.8, 3.05, 3.15, 2.95]
    assert median_with_ci(values) == (3.025, 2.8, 3.2)
    # n = 6: only (smallest, largest) reaches 95% (1 - 2/64 = 96.9%).
    assert median_with_ci([1.0, 6.0, 2.0, 5.0, 3.0, 4.0]) == (3.5, 1.0, 6.0)
    # n = 20: P(B <= 5) = 2.07% per side, so (6th, 15th).
    assert median_with_ci([float(v) for v in range(1, 21)]) == (10.5, 6.0, 15.0)


def test_median_ci_needs_six_values() -> None:
    assert median_with_ci([1.0, 2.0, 3.0, 4.0, 5.0]) == (3.0, None, None)
    assert median_with_ci([]) == (None, None, None)


def test_ci_half_width_is_the_wider_side_over_the_median() -> None:
    assert ci_half_width(2.0, 1.9, 2.2) == pytest.approx(0.1)
    assert ci_half_width(2.0, None, None) is None


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99])
def test_the_interval_ends_are_scipys_order_statistics(confidence: float) -> None:
    """The ranks computed in exact arithmetic are those scipy.stats.quantile_test picks, for
    every sample size a run can have (up to 1,000 pairs), including where no end exists."""
    from scipy.stats import quantile_test

    for n in range(1, 1001 if confidence == 0.95 else 301):
        values = [float(value) for value in range(n)]
        interval = quantile_test(values, q=statistics.median(values), p=0.5)
        ends = interval.confidence_interval(confidence)
        expected = (
            -1 if math.isnan(ends.low) else int(ends.low),
            n if math.isnan(ends.high) else int(ends.high),
        )
        assert median_interval_ranks(n, confidence) == expected, n
