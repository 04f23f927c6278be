"""Statistics over locust's raw figures."""

import pytest

from loadtest.stats import merge_histograms, percentile_ms, ratio, relative_spread, summarize


def test_percentile_ms_reads_the_cumulative_histogram() -> None:
    histogram = {10: 50, 20: 40, 90: 9, 300: 1}  # 100 requests
    assert percentile_ms(histogram, 0.50) == 10
    assert percentile_ms(histogram, 0.51) == 20
    assert percentile_ms(histogram, 0.95) == 90
    assert percentile_ms(histogram, 0.99) == 90
    assert percentile_ms(histogram, 1.0) == 300


def test_percentile_ms_of_nothing_is_none() -> None:
    assert percentile_ms({}, 0.5) is None


def test_merge_histograms_adds_counts_per_bucket() -> None:
    assert merge_histograms([{1: 2, 5: 1}, {5: 3, 7: 1}, {}]) == {1: 2, 5: 4, 7: 1}


def test_summarize_gives_median_min_max() -> None:
    assert summarize([3.0, 1.0, 2.0, 10.0]) == {"median": 2.5, "min": 1.0, "max": 10.0}
    assert summarize([]) == {"median": None, "min": None, "max": None}


def test_relative_spread_is_range_over_median() -> None:
    assert relative_spread([90.0, 100.0, 110.0]) == pytest.approx(0.2)
    assert relative_spread([100.0]) is None


@pytest.mark.parametrize(
    ("numerator", "denominator", "expected"),
    [(300.0, 100.0, 3.0), (None, 100.0, None), (100.0, None, None), (100.0, 0, None)],
)
def test_ratio_handles_missing_values(numerator, denominator, expected) -> None:
    assert ratio(numerator, denominator) == expected
