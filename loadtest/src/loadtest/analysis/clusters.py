"""The interval that covers a rerun. Pairs of one repeat share its fresh processes, its freshly
loaded database and the machine's state that hour, so they are not independent: a second run
moves the ratio more than the pairs of one run spread. Each repeat is a cluster: its own value is
the median of its pairs' log-ratios, and the interval is Student's t over the repeats' values
(a cluster-level analysis: the spread between repeats holds the spread within them too). It
needs MIN_REPEATS repeats; with fewer, the ratio keeps the pooled median's interval
(analysis/stats.py) and says so in its `method`.

How many repeats a target precision needs is planned from a pilot (`repeats_needed`): the
pilot's spread, and t with its degrees of freedom, give the number at which the interval is
expected to be within the target (Stein's two-stage rule: one look, after the pilot, so the
look costs no coverage). loadtest/harness_tests/analysis/test_clusters.py simulates runs with
a known ratio to check the coverage."""

import functools
import math
import statistics
from collections.abc import Sequence

CONFIDENCE = 0.95
# Below 5 repeats a t interval over repeats is too wide to be of use (t = 3.18 at 3), and a
# rerun's spread is guessed from too few of them.
MIN_REPEATS = 5
CLUSTER_METHOD = "t over repeats (each repeat's median log-ratio)"
POOLED_METHOD = "order statistics over pooled pairs"


@functools.cache
def t_quantile(degrees_of_freedom: int, confidence: float = CONFIDENCE) -> float:
    # Student's t quantile, the function scipy.stats.t.ppf calls (scipy.special imports in a
    # third of the time scipy.stats takes).
    from scipy.special import stdtrit

    return float(stdtrit(degrees_of_freedom, 0.5 + confidence / 2))


def repeat_values(clusters: Sequence[Sequence[float]]) -> list[float]:
    """Each repeat's median ratio, as a logarithm (repeats without a pair left out: a window
    that served nothing is no pair, analysis/paired_windows.py, and a flag says so)."""
    medians = [statistics.median(pairs) for pairs in clusters if pairs]
    return [math.log(median) for median in medians if median > 0]


def cluster_interval(
    clusters: Sequence[Sequence[float]], pilot: int | None = None, confidence: float = CONFIDENCE
) -> tuple[float, float, float] | None:
    """(estimate, low, high) of the ratio over the repeats' values; None below MIN_REPEATS.

    `pilot`: the repeats that planned how many more to run (repeats_needed). The spread is
    theirs, with their degrees of freedom, and the mean is of every repeat (Stein's two-stage
    interval): the number of repeats depends on the pilot's spread alone, so this interval keeps
    its coverage, where one that also took its spread from the later repeats would not (runs
    that happened to look steady stop early, and their intervals are too narrow). Without
    `pilot`, every repeat is the pilot: Student's t interval over all of them."""
    values = repeat_values(clusters)
    # The pilot is the first `pilot` repeats by number (`clusters` holds every repeat, in
    # order, a repeat without pairs as an empty list), not the first values.
    first = repeat_values(clusters[:pilot]) if pilot else values
    if len(first) < MIN_REPEATS:
        return None
    mean = statistics.fmean(values)
    half = t_quantile(len(first) - 1, confidence) * statistics.stdev(first) / math.sqrt(len(values))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def repeats_needed(
    clusters: Sequence[Sequence[float]], target: float, confidence: float = CONFIDENCE
) -> int | None:
    """Repeats for an interval within ±`target` (0.05: ±5%), planned from the pilot's repeats:
    the fewest k with t(pilot - 1) * s / sqrt(k) <= log(1 + target). None below MIN_REPEATS."""
    values = repeat_values(clusters)
    if len(values) < MIN_REPEATS:
        return None
    allowed = math.log(1 + target)
    spread = t_quantile(len(values) - 1, confidence) * statistics.stdev(values)
    return max(len(values), math.ceil((spread / allowed) ** 2))
