"""Locust's response-time histograms: merged, and read as percentiles."""

from loadtest.load.histograms import merge_histograms, percentile_ms


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
