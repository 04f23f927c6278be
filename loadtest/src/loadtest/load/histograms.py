"""Locust's response-time histograms (response time in ms, in its buckets -> count): merged
over windows, and read as percentiles."""

from collections.abc import Iterable, Mapping


def merge_histograms(histograms: Iterable[Mapping[int, int]]) -> dict[int, int]:
    merged: dict[int, int] = {}
    for histogram in histograms:
        for response_time_ms, count in histogram.items():
            merged[response_time_ms] = merged.get(response_time_ms, 0) + count
    return merged


def percentile_ms(histogram: Mapping[int, int], fraction: float) -> float | None:
    """The smallest response time with at least `fraction` of requests at or below it.

    Locust rounds response times into buckets (1 ms below 100 ms, 10 ms below 1 s, then
    100 ms), so the result has that resolution.
    """
    total = sum(histogram.values())
    if total == 0:
        return None
    threshold = fraction * total
    cumulative = 0
    for response_time_ms in sorted(histogram):
        cumulative += histogram[response_time_ms]
        if cumulative >= threshold:
            return float(response_time_ms)
    return float(max(histogram))
