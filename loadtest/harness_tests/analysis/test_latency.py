"""Open-loop latency pooled over rounds (loadtest.analysis.latency), on HdrHistograms built by
hand: percentiles of pooled counts, their paired bootstrap intervals and ratios, and the knee."""

import math
from collections.abc import Iterable

import numpy as np
import pytest

from loadtest.analysis.latency import (
    KNEE_FACTOR,
    RoundCounts,
    knee_of,
    knee_with_interval,
    paired_percentiles,
    percentile_of,
    round_counts,
)
from loadtest.load.open_loop.histograms import decoded, merged, new_histogram

FRACTIONS = (0.5, 0.9, 0.99, 0.999, 1.0)


def histogram_text(values_us: Iterable[int]) -> str:
    """An encoded histogram of these latencies (µs), as a window's answer carries it."""
    histogram = new_histogram()
    for value in values_us:
        histogram.record_value(int(value))
    text: str = histogram.encode().decode("ascii")
    return text


def bucket_ms(value_us: int) -> float:
    """What a value reads back as: the highest value of its bucket, in ms."""
    return float(new_histogram().get_highest_equivalent_value(value_us)) / 1000


def lognormal_rounds(
    rounds: int, per_round: int, seed: int, scale: float = 1.0
) -> dict[int, list[int]]:
    """Per round, latencies (µs) around 2 ms with a long tail, each times `scale`."""
    generator = np.random.default_rng(seed)
    return {
        round_: [
            round(scale * value)
            for value in generator.lognormal(math.log(2000), 0.6, per_round).round()
        ]
        for round_ in range(1, rounds + 1)
    }


def texts(by_round: dict[int, list[int]]) -> dict[int, str]:
    return {round_: histogram_text(values) for round_, values in by_round.items()}


# percentile_of


def test_percentile_of_reads_the_cumulative_counts() -> None:
    values = np.array([1.0, 2.0, 5.0, 10.0])
    counts = np.array([50, 40, 9, 1])  # 100 in all
    assert percentile_of(values, counts, 0.5) == 1.0  # the 50th
    assert percentile_of(values, counts, 0.51) == 2.0
    assert percentile_of(values, counts, 0.9) == 2.0  # the 90th
    assert percentile_of(values, counts, 0.91) == 5.0
    assert percentile_of(values, counts, 0.99) == 5.0
    assert percentile_of(values, counts, 1.0) == 10.0
    assert percentile_of(values, counts, 0.0) == 1.0  # at least the first


def test_percentile_of_skips_empty_buckets_and_nothing_is_none() -> None:
    values = np.array([1.0, 2.0, 3.0])
    assert percentile_of(values, np.array([5, 0, 5]), 0.5) == 1.0
    assert percentile_of(values, np.array([5, 0, 5]), 0.6) == 3.0
    assert percentile_of(values, np.array([0, 0, 0]), 0.5) is None


def test_percentile_of_rounds_the_rank_as_hdrh_does() -> None:
    # 160 counts: 99% of them is 158.4, rounded to the 158th value, as hdrh's
    # get_value_at_percentile reads it (a nearest rank would be the 159th).
    values = np.arange(1.0, 161.0)
    counts = np.ones(160, dtype=np.int64)
    assert percentile_of(values, counts, 0.99) == 158.0
    histogram = new_histogram()
    for value in range(1, 161):
        histogram.record_value(value)
    assert histogram.get_value_at_percentile(99) == 158


# round_counts and RoundCounts


def test_pooled_percentiles_are_those_of_the_merged_histogram() -> None:
    # 4 rounds of 250: the pools hold 1,000 (or 750) counts, whose 50%, 90%, 99% and 99.9%
    # are whole counts, where every rounding rule agrees.
    arms = {
        "v1": texts(lognormal_rounds(4, 250, seed=1)),
        "v2": texts(lognormal_rounds(4, 250, seed=2, scale=1.5)),
    }
    counts = round_counts(arms)
    assert counts["v1"].values_ms.tolist() == counts["v2"].values_ms.tolist()  # one set
    assert counts["v1"].rounds == (1, 2, 3, 4)
    assert counts["v1"].counts.shape == (4, len(counts["v1"].values_ms))
    assert counts["v1"].counts.sum(axis=1).tolist() == [250] * 4
    for arm, by_round in arms.items():
        pool = merged(by_round.values())
        for fraction in FRACTIONS:
            expected = pool.get_value_at_percentile(fraction * 100) / 1000
            assert counts[arm].percentile_ms(fraction) == expected, (arm, fraction)
        # Rows chosen with repeats, as a resample draws them: round 1 twice, and round 3.
        drawn = merged([by_round[1], by_round[1], by_round[3]])
        for fraction in (0.5, 0.9):  # 750 counts: whole counts again
            expected = drawn.get_value_at_percentile(fraction * 100) / 1000
            assert counts[arm].percentile_ms(fraction, np.array([0, 0, 2])) == expected


def test_round_counts_values_are_the_buckets_of_the_recorded_values() -> None:
    counts = round_counts({"v1": {1: histogram_text([1000, 1000, 5000]), 2: histogram_text([])}})
    found = counts["v1"]
    assert found.values_ms.tolist() == [bucket_ms(1000), bucket_ms(5000)]
    assert found.counts.tolist() == [[2, 1], [0, 0]]
    assert found.percentile_ms(0.5) == 1.0  # below 2,048 µs every value has its own bucket
    assert found.percentile_ms(0.5, np.array([1])) is None  # an empty round
    # Over a wider set of buckets (another arm's values too), the extra columns stay empty.
    wider = RoundCounts.from_histograms({3: histogram_text([1000, 1000, 5000])}, [500, 1000, 5003])
    assert wider.rounds == (3,)
    assert wider.values_ms.tolist() == [0.5, 1.0, 5.003]
    assert wider.counts.tolist() == [[0, 2, 1]]


# paired_percentiles


def test_each_interval_holds_its_estimate() -> None:
    arms = round_counts(
        {
            "v1": texts(lognormal_rounds(8, 300, seed=3)),
            "v2": texts(lognormal_rounds(8, 300, seed=4, scale=1.3)),
        }
    )
    figures, ratios = paired_percentiles(arms, [0.5, 0.9, 0.99], "v1", resamples=500)
    for arm in ("v1", "v2"):
        for fraction in (0.5, 0.9, 0.99):
            figure = figures[arm][fraction]
            assert figure.ms == arms[arm].percentile_ms(fraction)
            assert figure.ci95_low is not None and figure.ci95_high is not None
            assert figure.ci95_low <= figure.ms <= figure.ci95_high, (arm, fraction)
            assert figure.ci95_low < figure.ci95_high  # 8 different rounds: some spread
    assert set(ratios) == {"v2"}  # each other arm over the baseline
    for fraction in (0.5, 0.9, 0.99):
        ratio = ratios["v2"][fraction]
        assert ratio.pairs == 8
        assert ratio.estimate == pytest.approx(
            figures["v2"][fraction].ms / figures["v1"][fraction].ms
        )
        assert ratio.ci95_low is not None and ratio.ci95_high is not None
        assert ratio.ci95_low <= ratio.estimate <= ratio.ci95_high
    # 1.3 times slower throughout: its median's ratio says so.
    assert ratios["v2"][0.5].estimate == pytest.approx(1.3, rel=0.1)


def test_identical_arms_have_a_ratio_of_one_exactly() -> None:
    same = texts(lognormal_rounds(8, 200, seed=5))
    arms = round_counts({"v1": same, "v2": dict(same)})
    _, ratios = paired_percentiles(arms, [0.5, 0.99], "v1", resamples=300)
    for fraction in (0.5, 0.99):
        ratio = ratios["v2"][fraction]
        # The same rounds are drawn for both arms: every resample's ratio is 1 too.
        assert (ratio.estimate, ratio.ci95_low, ratio.ci95_high) == (1.0, 1.0, 1.0)


def test_an_arm_twice_as_slow_has_a_ratio_of_two() -> None:
    by_round = lognormal_rounds(8, 200, seed=6)
    doubled = {round_: [2 * value for value in values] for round_, values in by_round.items()}
    arms = round_counts({"v1": texts(by_round), "v2": texts(doubled)})
    _, ratios = paired_percentiles(arms, [0.5, 0.9, 0.99], "v1", resamples=300)
    for fraction in (0.5, 0.9, 0.99):
        ratio = ratios["v2"][fraction]
        # Twice each value, within the histogram's precision (3 significant digits).
        assert ratio.estimate == pytest.approx(2.0, rel=0.005)
        assert ratio.ci95_low is not None and ratio.ci95_high is not None
        assert 1.99 <= ratio.ci95_low <= ratio.ci95_high <= 2.01


def test_fewer_than_six_rounds_give_no_interval() -> None:
    arms = round_counts(
        {
            "v1": texts(lognormal_rounds(5, 200, seed=7)),
            "v2": texts(lognormal_rounds(5, 200, seed=8)),
        }
    )
    figures, ratios = paired_percentiles(arms, [0.5, 0.99], "v1")
    for arm in ("v1", "v2"):
        figure = figures[arm][0.99]
        assert figure.ms is not None
        assert (figure.ci95_low, figure.ci95_high) == (None, None)
    ratio = ratios["v2"][0.99]
    assert ratio.estimate is not None and ratio.pairs == 5
    assert (ratio.ci95_low, ratio.ci95_high) == (None, None)


def test_only_rounds_every_arm_has_are_paired() -> None:
    v1 = texts(lognormal_rounds(8, 100, seed=9))
    v2 = texts(lognormal_rounds(8, 100, seed=10))
    del v2[8]
    _, ratios = paired_percentiles(round_counts({"v1": v1, "v2": v2}), [0.5], "v1", resamples=50)
    assert ratios["v2"][0.5].pairs == 7
    _, none = paired_percentiles(round_counts({"v1": v1, "v2": v2}), [0.5], None, resamples=50)
    assert none == {}  # no baseline: no ratios


# The knee


def test_the_knee_is_interpolated_on_log_scales() -> None:
    # p99 passes 10 x 1 ms between 400 r/s (5 ms) and 800 r/s (40 ms). On log scales, 10 ms
    # is a third of the way from 5 to 40 (log 2 / log 8), so the knee is a third of the way
    # from 400 to 800: 400 x 2^(1/3).
    assert KNEE_FACTOR == 10
    knee = knee_of([100, 200, 400, 800], [1.0, 2.0, 5.0, 40.0])
    assert knee == pytest.approx(400 * 2 ** (1 / 3))
    assert knee == pytest.approx(503.968, abs=0.001)
    # Crossing at the first step: between 100 (1 ms) and 200 r/s (100 ms), 10 ms is halfway.
    assert knee_of([100, 200], [1.0, 100.0]) == pytest.approx(100 * math.sqrt(2))


def test_no_knee_when_p99_never_passes_ten_times_its_first_value() -> None:
    assert knee_of([100, 200, 400], [1.0, 5.0, 9.9]) is None
    assert knee_of([100, 200], [1.0, 10.0]) is None  # reaching it is not passing it
    assert knee_of([100, 200], [None, 50.0]) is None  # nothing at the lowest rate
    assert knee_of([100, 200], [0.0, 50.0]) is None
    assert knee_of([], []) is None


RATES = [100.0, 200.0, 400.0, 800.0]
ROUNDS = 8


def steady_round(value_us: int) -> str:
    return histogram_text([value_us] * 100)


def test_the_knee_has_no_upper_bound_when_some_resamples_never_cross() -> None:
    # Every round alike at 100, 200 and 400 r/s (p99 1, 2 and 5 ms); at 800 r/s two rounds
    # of eight have 10 slow requests (100 ms) in 100. Pooled, 20 of 800 are slow: the p99 is
    # 100 ms and the knee lies between 400 and 800. A resample without either slow round
    # (a chance of (6/8)^8, 10%) never crosses: the 97.5% bound is past the highest rate.
    by_rate = []
    for rate, value_us in zip(RATES[:3], (1000, 2000, 5000), strict=True):
        found = {round_: steady_round(value_us) for round_ in range(ROUNDS)}
        by_rate.append((rate, round_counts({"v1": found})["v1"]))
    slow = histogram_text([1000] * 90 + [100_000] * 10)
    top = {round_: slow if round_ < 2 else steady_round(1000) for round_ in range(ROUNDS)}
    by_rate.append((RATES[3], round_counts({"v1": top})["v1"]))

    knee = knee_with_interval(by_rate, resamples=1000)
    p99s = [bucket_ms(1000), bucket_ms(2000), bucket_ms(5000), bucket_ms(100_000)]
    assert p99s[:2] == [1.0, 2.0]
    share = (math.log(10 * p99s[0]) - math.log(p99s[2])) / (math.log(p99s[3]) - math.log(p99s[2]))
    expected = 400 * 2**share
    assert knee.rps == pytest.approx(expected)
    assert 400 < expected < 800
    # A resample with a slow round crosses at the same p99, so at the same rate.
    assert knee.ci95_low == pytest.approx(expected)
    assert knee.ci95_high is None
    assert knee.beyond_rps == 800
    assert knee.low_load_p99_ms == 1.0
    assert knee.as_dict()["ci95_high"] is None


def test_a_knee_past_every_rate_has_no_estimate_and_no_bounds() -> None:
    by_rate = [
        (rate, round_counts({"v1": {r: steady_round(value) for r in range(ROUNDS)}})["v1"])
        for rate, value in zip(RATES, (1000, 1200, 1500, 2000), strict=True)
    ]
    knee = knee_with_interval(by_rate, resamples=200)
    assert (knee.rps, knee.ci95_low, knee.ci95_high) == (None, None, None)
    assert knee.beyond_rps == 800


def test_a_knee_from_single_rounds_has_no_interval() -> None:
    by_rate = [
        (rate, round_counts({"v1": {0: steady_round(value)}})["v1"])
        for rate, value in zip(RATES[:2], (1000, 100_000), strict=True)
    ]
    knee = knee_with_interval(by_rate)
    assert knee.rps is not None and 100 < knee.rps < 200
    assert (knee.ci95_low, knee.ci95_high) == (None, None)


def test_histograms_round_trip_through_their_text() -> None:
    text = histogram_text([1000, 1500, 250_000])
    histogram = decoded(text)
    assert histogram.get_total_count() == 3
    assert histogram.get_max_value() == new_histogram().get_highest_equivalent_value(250_000)
