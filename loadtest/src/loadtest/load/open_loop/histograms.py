"""The generator's HDR histograms (microseconds, encoded as HdrHistogram's base64 text, as they
stand in results.json): decoded, merged across windows, read as percentiles in milliseconds."""

from collections.abc import Iterable

from hdrh.histogram import HdrHistogram

# Latencies in microseconds, 1 µs to 10 minutes, to 3 significant digits (HdrHistogram's usual
# precision: a value is known within 0.1%).
LOWEST_US = 1
HIGHEST_US = 600_000_000
SIGNIFICANT_DIGITS = 3


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)


def record_us(histogram: HdrHistogram, seconds: float) -> None:
    histogram.record_value(min(HIGHEST_US, max(LOWEST_US, round(seconds * 1_000_000))))


def encoded(histogram: HdrHistogram) -> str:
    return histogram.encode().decode("ascii")


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
