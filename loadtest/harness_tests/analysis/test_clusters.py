"""The interval that covers a rerun (analysis/clusters.py), checked on simulated runs whose ratio
is known: windows that serve heavy-tailed requests (mostly short, one in ten five times as
long), a machine whose speed drifts from window to window, and fresh processes that each start
a little faster or slower. A run is planned as compare plans it: a pilot of 5 repeats, then as
many more as the pilot says the target needs, up to a cap (the budget). At least 93% of the
intervals must hold the truth. A fixed seed: the same simulated runs every time."""

import math
import statistics

import numpy as np
import pytest

from loadtest.analysis.clusters import (
    MIN_REPEATS,
    cluster_interval,
    repeat_values,
    repeats_needed,
)

RUNS = 1000
PAIRS = 6  # pairs per repeat, as compare runs them
MAX_REPEATS = 16  # the budget's cap
TARGET = 0.05
REQUESTS_PER_WINDOW = 100  # about, for the faster arm
DRAWS = 3 * REQUESTS_PER_WINDOW  # per window: enough that no window runs out of requests


def repeat_of(rng: np.random.Generator, truth: float, process_spread: float) -> list[float]:
    """One repeat: fresh processes (each arm's speed off by a lognormal factor), then PAIRS
    rounds of a window per arm, in alternating order, on a machine whose speed drifts."""
    cost = np.array([1.0, 1.0 / truth])  # the baseline's, the arm's: throughput ratio = truth
    cost = cost * np.exp(rng.normal(0, process_spread, 2))
    mean_factor = 0.9 * 1.0 + 0.1 * 5.0  # the heavy tail's mean, with lognormal jitter ~1
    window = REQUESTS_PER_WINDOW * mean_factor
    speed = np.exp(np.cumsum(rng.normal(0, 0.01, 2 * PAIRS)) + rng.normal(0, 0.1))
    factors = np.where(rng.random((2 * PAIRS, DRAWS)) < 0.1, 5.0, 1.0)
    factors *= np.exp(rng.normal(0, 0.3, (2 * PAIRS, DRAWS)) - 0.045)
    # Window 2r and 2r+1 are round r's: the baseline first in even rounds, the arm first in odd.
    arm = np.array([(0, 1) if round_ % 2 == 0 else (1, 0) for round_ in range(PAIRS)]).ravel()
    finished = np.cumsum(factors * cost[arm][:, None], axis=1) / speed[:, None]
    served = (finished <= window).sum(axis=1).reshape(PAIRS, 2)
    by_arm = np.where(arm.reshape(PAIRS, 2) == 1, served, 0).sum(axis=1) / np.where(
        arm.reshape(PAIRS, 2) == 0, served, 0
    ).sum(axis=1)
    return [float(ratio) for ratio in by_arm]


def simulated_run(
    rng: np.random.Generator, truth: float, process_spread: float
) -> tuple[bool, int, bool]:
    """Whether the interval holds the truth, the repeats run, and whether the cap stopped it."""
    clusters = [repeat_of(rng, truth, process_spread) for _ in range(MIN_REPEATS)]
    needed = repeats_needed(clusters, TARGET)
    assert needed is not None
    while len(clusters) < min(needed, MAX_REPEATS):
        clusters.append(repeat_of(rng, truth, process_spread))
    interval = cluster_interval(clusters, pilot=MIN_REPEATS)
    assert interval is not None
    _, low, high = interval
    return low <= truth <= high, len(clusters), needed > MAX_REPEATS


@pytest.mark.parametrize(
    ("truth", "process_spread"),
    [(0.8, 0.02), (0.5, 0.05)],
    ids=["2%-per-process", "5%-per-process"],
)
def test_the_interval_holds_the_truth_in_at_least_93_percent_of_simulated_runs(
    truth: float, process_spread: float
) -> None:
    rng = np.random.default_rng(20261127)
    runs = [simulated_run(rng, truth, process_spread) for _ in range(RUNS)]
    coverage = statistics.fmean(held for held, _, _ in runs)
    repeats = [count for _, count, _ in runs]
    capped = statistics.fmean(stopped for _, _, stopped in runs)
    print(f"coverage {coverage:.3f}, repeats {min(repeats)}-{max(repeats)}, capped {capped:.2f}")
    assert coverage >= 0.93, (coverage, statistics.fmean(repeats), capped)


def test_the_pooled_interval_misses_a_rerun_where_the_cluster_interval_does_not() -> None:
    """Why clusters: with 5% per fresh process, the pairs of one run spread less than runs do,
    so an interval over pooled pairs (treating them as independent) holds the truth far less
    often than 95%."""
    from loadtest.analysis.stats import median_with_ci

    rng = np.random.default_rng(7)
    held_pooled = held_cluster = 0
    for _ in range(200):
        clusters = [repeat_of(rng, 0.8, 0.05) for _ in range(MIN_REPEATS)]
        _, low, high = median_with_ci([ratio for pairs in clusters for ratio in pairs])
        assert low is not None and high is not None
        held_pooled += low <= 0.8 <= high
        interval = cluster_interval(clusters)
        assert interval is not None
        held_cluster += interval[1] <= 0.8 <= interval[2]
    assert held_pooled / 200 < 0.9 < 0.93 <= held_cluster / 200, (held_pooled, held_cluster)


def test_a_pair_whose_window_served_nothing_counts_as_its_repeats_lowest() -> None:
    """A ratio of 0 (the arm's window stalled empty, flagged by the run) is a low pair, not a
    crash; a repeat whose median is 0 has no value."""
    clusters = [[2.0, 0.0, 2.0], [0.0], [2.0, 0.0, 0.0]]
    assert repeat_values(clusters) == [math.log(2.0)]


def test_the_two_stage_interval_takes_its_spread_from_the_pilot_and_its_mean_from_all() -> None:
    """Stein's interval: after a pilot of 5, 3 repeats more; the spread and the degrees of
    freedom are the pilot's, the mean is of all 8, the half-width over the square root of 8.
    The pilot is counted by repeat: an empty repeat 2 leaves the pilot 4 values, too few."""
    pilot = [[2.0], [2.2], [1.8], [2.1], [1.9]]
    clusters = [*pilot, [2.4], [2.5], [2.3]]
    values = repeat_values(clusters)
    half = 2.7764451051977987 * statistics.stdev(values[:5]) / math.sqrt(8)
    mean = statistics.fmean(values)
    assert cluster_interval(clusters, pilot=5) == pytest.approx(
        (math.exp(mean), math.exp(mean - half), math.exp(mean + half))
    )
    with_a_gap = [pilot[0], [], *pilot[2:], [2.4], [2.5], [2.3]]
    assert cluster_interval(with_a_gap, pilot=5) is None


def test_below_five_repeats_there_is_no_cluster_interval() -> None:
    clusters = [[1.0, 1.1, 0.9]] * (MIN_REPEATS - 1)
    assert cluster_interval(clusters) is None
    assert repeats_needed(clusters, TARGET) is None


def test_the_interval_is_students_t_over_the_repeats_median_log_ratios() -> None:
    clusters = [[2.0, 2.0, 2.2], [1.8], [2.0], [2.2, 2.2], [2.0, 1.0, 3.0]]
    values = repeat_values(clusters)
    assert values == pytest.approx(
        [math.log(2.0), math.log(1.8), *[math.log(v) for v in (2, 2.2, 2)]]
    )
    estimate, low, high = cluster_interval(clusters) or (0, 0, 0)
    mean, spread = statistics.fmean(values), statistics.stdev(values)
    half = 2.7764451051977987 * spread / math.sqrt(5)  # t(0.975, 4)
    assert (estimate, low, high) == pytest.approx(
        (math.exp(mean), math.exp(mean - half), math.exp(mean + half))
    )


def test_the_repeats_needed_grow_with_the_square_of_the_spread_over_the_target() -> None:
    steady = [[2.0]] * 5
    assert repeats_needed(steady, TARGET) == 5  # no spread: the pilot is enough
    spread = [[2.0], [2.2], [1.8], [2.1], [1.9]]
    s = statistics.stdev(repeat_values(spread))
    expected = math.ceil((2.7764451051977987 * s / math.log(1.05)) ** 2)
    assert repeats_needed(spread, TARGET) == expected > 5
    wider = math.ceil((2.7764451051977987 * s / math.log(1.10)) ** 2)
    assert repeats_needed(spread, 0.10) == max(5, wider) < expected
