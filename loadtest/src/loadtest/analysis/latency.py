"""Percentiles of open-loop latency pooled over rounds, with intervals from resampling rounds.

A window is too short for a tail (a 3 s window at 100 r/s holds 300 requests; a p99.9 needs
thousands), so each arm's windows at a rate are pooled into one histogram, and a percentile is
read off the pool. Its 95% interval comes from a paired bootstrap: rounds are drawn with
replacement, the same rounds for every arm (a round's windows ran seconds apart, so the
machine's drift is shared), the pools rebuilt and the percentiles and their ratios read again.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from loadtest.analysis.ratio import PairedRatio
from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.load.open_loop.histograms import counts_by_value

RESAMPLES = 2000
# The knee: the rate at which an arm's p99 is this many times its p99 at the lowest rate.
KNEE_FACTOR = 10.0


@dataclass(frozen=True)
class RoundCounts:
    """One arm's windows at one rate as a matrix: a row per round, a column per histogram
    bucket (`values_ms`: the value each bucket stands for)."""

    rounds: tuple[int, ...]
    values_ms: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_histograms(
        cls, by_round: Mapping[int, str], values_us: Sequence[int]
    ) -> "RoundCounts":
        column = {value: index for index, value in enumerate(values_us)}
        rounds = tuple(sorted(by_round))
        counts = np.zeros((len(rounds), len(values_us)), dtype=np.int64)
        for row, round_ in enumerate(rounds):
            for value, count in counts_by_value(by_round[round_]).items():
                counts[row, column[value]] += count
        return cls(rounds, np.asarray(values_us, dtype=float) / 1000, counts)

    def percentile_ms(self, fraction: float, rows: np.ndarray | None = None) -> float | None:
        pooled = self.counts.sum(axis=0) if rows is None else self.counts[rows].sum(axis=0)
        return percentile_of(self.values_ms, pooled, fraction)


def percentile_of(values_ms: np.ndarray, counts: np.ndarray, fraction: float) -> float | None:
    """The smallest value with at least `fraction` of the counts at or below it, the rank
    rounded to the nearest count as the hdrh package's get_value_at_percentile does (so a pooled
    p99 here and a p99.9 read with hdrh follow one rule); None without counts."""
    total = int(counts.sum())
    if total == 0:
        return None
    cumulative = np.cumsum(counts)
    index = int(np.searchsorted(cumulative, max(1, int(fraction * total + 0.5))))
    return float(values_ms[min(index, len(values_ms) - 1)])


def common_values(histograms: Sequence[str]) -> list[int]:
    values: set[int] = set()
    for text in histograms:
        values |= counts_by_value(text).keys()
    return sorted(values)


def round_counts(arms: Mapping[str, Mapping[int, str]]) -> dict[str, RoundCounts]:
    """Each arm's {round: encoded histogram} as count matrices over one set of buckets."""
    values = common_values([text for by_round in arms.values() for text in by_round.values()])
    return {arm: RoundCounts.from_histograms(by_round, values) for arm, by_round in arms.items()}


@dataclass(frozen=True)
class PercentileFigure:
    """A pooled percentile (ms) and its 95% interval over resampled rounds."""

    ms: float | None
    ci95_low: float | None
    ci95_high: float | None

    def as_dict(self) -> dict[str, float | None]:
        return {
            "ms": rounded(self.ms),
            "ci95_low": rounded(self.ci95_low),
            "ci95_high": rounded(self.ci95_high),
        }


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def interval(samples: list[float]) -> tuple[float | None, float | None]:
    if not samples:
        return None, None
    low, high = np.percentile(samples, [2.5, 97.5])
    return float(low), float(high)


def paired_percentiles(
    arms: Mapping[str, RoundCounts],
    fractions: Sequence[float],
    baseline: str | None,
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> tuple[dict[str, dict[float, PercentileFigure]], dict[str, dict[float, PairedRatio]]]:
    """Per arm and fraction its pooled percentile, and per other arm its ratio to the
    baseline's, each with a 95% interval from resampling the rounds every arm has (none with
    fewer than MIN_PAIRS_FOR_CI rounds)."""
    if not arms:
        return {}, {}
    shared = sorted(set.intersection(*(set(counts.rounds) for counts in arms.values())))
    rows = {arm: [counts.rounds.index(round_) for round_ in shared] for arm, counts in arms.items()}
    samples: dict[str, dict[float, list[float]]] = {arm: {f: [] for f in fractions} for arm in arms}
    if len(shared) >= MIN_PAIRS_FOR_CI:
        generator = np.random.default_rng(seed)
        for _ in range(resamples):
            drawn = generator.integers(0, len(shared), len(shared))
            for arm, counts in arms.items():
                chosen = np.asarray(rows[arm])[drawn]
                for fraction in fractions:
                    value = counts.percentile_ms(fraction, chosen)
                    samples[arm][fraction].append(math.nan if value is None else value)
    figures: dict[str, dict[float, PercentileFigure]] = {}
    for arm, counts in arms.items():
        figures[arm] = {}
        for fraction in fractions:
            low, high = interval(
                [value for value in samples[arm][fraction] if math.isfinite(value)]
            )
            # Over the rounds every arm has, as the intervals are.
            estimate = counts.percentile_ms(fraction, np.asarray(rows[arm], dtype=int))
            figures[arm][fraction] = PercentileFigure(estimate, low, high)
    ratios: dict[str, dict[float, PairedRatio]] = {}
    if baseline is not None and baseline in arms:
        for arm in (arm for arm in arms if arm != baseline):
            ratios[arm] = {}
            for fraction in fractions:
                ratios[arm][fraction] = ratio_figure(
                    figures[arm][fraction].ms,
                    figures[baseline][fraction].ms,
                    samples[arm][fraction],
                    samples[baseline][fraction],
                    len(shared),
                )
    return figures, ratios


def ratio_figure(
    numerator: float | None,
    denominator: float | None,
    numerators: list[float],
    denominators: list[float],
    rounds: int,
) -> PairedRatio:
    estimate = numerator / denominator if numerator is not None and denominator else None
    ratios = [
        top / bottom
        for top, bottom in zip(numerators, denominators, strict=True)
        if math.isfinite(top) and math.isfinite(bottom) and bottom > 0
    ]
    low, high = interval(ratios) if estimate is not None else (None, None)
    return PairedRatio(estimate, low, high, rounds)


def knee_of(rates: Sequence[float], p99s: Sequence[float | None]) -> float | None:
    """The rate at which p99 first passes KNEE_FACTOR times its value at the lowest rate,
    interpolated between the two measured rates around it on log scales; None if it never does
    (the knee lies past the highest rate measured). A rate with no p99 (every request there
    failed) has passed it: the knee is that rate."""
    if not p99s or p99s[0] is None or p99s[0] <= 0:
        return None
    threshold = KNEE_FACTOR * p99s[0]
    below_rate, below = rates[0], p99s[0]  # the last rate with a figure, and its p99
    for index in range(1, len(rates)):
        value = p99s[index]
        if value is None:
            return rates[index]
        if value <= threshold:
            below_rate, below = rates[index], value
            continue
        share = (math.log(threshold) - math.log(below)) / (math.log(value) - math.log(below))
        return math.exp(
            math.log(below_rate) + share * (math.log(rates[index]) - math.log(below_rate))
        )
    return None


@dataclass(frozen=True)
class Knee:
    """An arm's knee (r/s) with its 95% interval; a None bound or estimate: past the highest
    rate measured (`beyond_rps`)."""

    rps: float | None
    ci95_low: float | None
    ci95_high: float | None
    beyond_rps: float
    low_load_p99_ms: float | None

    def as_dict(self) -> dict[str, float | None]:
        return {
            "rps": rounded(self.rps),
            "ci95_low": rounded(self.ci95_low),
            "ci95_high": rounded(self.ci95_high),
            "beyond_rps": rounded(self.beyond_rps),
            "low_load_p99_ms": rounded(self.low_load_p99_ms),
        }


def knee_with_interval(
    by_rate: Sequence[tuple[float, RoundCounts]], *, resamples: int = RESAMPLES, seed: int = 0
) -> Knee:
    """The knee over an arm's rates (ascending), each rate's rounds resampled on their own."""
    rates = [rate for rate, _ in by_rate]
    p99s = [counts.percentile_ms(0.99) for _, counts in by_rate]
    estimate = knee_of(rates, p99s)
    generator = np.random.default_rng(seed)
    knees: list[float] = []
    # Resampling fewer rounds than MIN_PAIRS_FOR_CI at any rate gives an interval of a handful of
    # distinct resamples: none.
    enough = all(len(counts.rounds) >= MIN_PAIRS_FOR_CI for _, counts in by_rate)
    for _ in range(resamples if enough else 0):
        drawn = [
            counts.percentile_ms(
                0.99, generator.integers(0, len(counts.rounds), len(counts.rounds))
            )
            for _, counts in by_rate
        ]
        knee = knee_of(rates, drawn)
        knees.append(math.inf if knee is None else knee)
    low: float | None = None
    high: float | None = None
    if knees:
        low_value, high_value = np.percentile(knees, [2.5, 97.5], method="inverted_cdf")
        low = float(low_value) if math.isfinite(low_value) else None
        high = float(high_value) if math.isfinite(high_value) else None
    return Knee(estimate, low, high, rates[-1] if rates else 0.0, p99s[0] if p99s else None)
