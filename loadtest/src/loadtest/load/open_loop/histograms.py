"""The generator's HDR histograms (microseconds, encoded as HdrHistogram's base64 text, as they
stand in results.json): decoded, merged across windows, read as percentiles in milliseconds."""

from collections.abc import Iterable

from hdrh.histogram import HdrHistogram

from loadtest.load.open_loop.generator import new_histogram


def decoded(text: str) -> HdrHistogram:
    return HdrHistogram.decode(text.encode("ascii"))


def merged(texts: Iterable[str]) -> HdrHistogram:
    total = new_histogram()
    for text in texts:
        total.add(decoded(text))
    return total


def counts_by_value(text: str) -> dict[int, int]:
    """A histogram as {the value its bucket stands for (µs): how many fell in it}."""
    histogram = decoded(text)
    return {
        item.value_iterated_to: item.count_at_value_iterated_to
        for item in histogram.get_recorded_iterator()
    }


def percentile_ms(histogram: HdrHistogram, percentile: float) -> float | None:
    """The value at `percentile` (0-100) in ms; None for an empty histogram."""
    if histogram.get_total_count() == 0:
        return None
    return float(histogram.get_value_at_percentile(percentile)) / 1000


def max_ms(histogram: HdrHistogram) -> float | None:
    if histogram.get_total_count() == 0:
        return None
    return float(histogram.get_max_value()) / 1000
