"""What a latency run says (runner.py): per scenario, rate and arm the latency percentiles of
its windows pooled (p50, p90 and p99 with 95% intervals from resampled rounds; p99.9 and the
maximum with the samples behind them), the rate served beside the rate offered, the load
generator's lateness, the app's collections; per rate each arm's percentiles over the
baseline's, paired by round; and per arm its knee."""

from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np

from loadtest.analysis.latency import (
    KNEE_FACTOR,
    knee_with_interval,
    paired_percentiles,
    percentile_of,
    round_counts,
    rounded,
)
from loadtest.analysis.limits import (
    HTTPERF_TOLERANCE_MS,
    HTTPERF_TOLERANCE_SHARE,
    LATE_LIMIT_MS,
    LATENCY_CI_HALF_WIDTH_LIMIT,
)
from loadtest.analysis.ratio import PairedRatio
from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.lab.arms import baseline_of
from loadtest.lab.pinning import PinningPlan
from loadtest.load.open_loop.histograms import (
    counts_by_value,
    decoded,
    max_ms,
    merged,
    percentile_ms,
)
from loadtest.modes.latency.settings import LatencySettings

SCHEMA_NOTE = (
    "Latency is counted from each request's due time on an open-loop schedule (coordinated "
    "omission corrected), pooled over an arm's windows at a rate; intervals resample rounds."
)
PERCENTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99}

TAIL = {"p99.9": 0.999}


def window_behind(window: dict[str, Any]) -> bool:
    """The generator fell behind its schedule in the window: 1% of its requests started more
    than LATE_LIMIT_MS late."""
    late = percentile_ms(decoded(window["lateness_us"]), 99)
    return late is not None and late > LATE_LIMIT_MS


def arm_figures(windows: list[dict[str, Any]]) -> dict[str, Any]:
    latency = merged(window["latency_us"] for window in windows)
    lateness = merged(window["lateness_us"] for window in windows)
    samples = latency.get_total_count()
    served = sum(window["served_rps"] for window in windows) / len(windows)
    app_cpu_s = sum(window["app_cpu_s"] for window in windows)
    elapsed_s = sum(window["elapsed_s"] for window in windows)
    failures = summed_failures(window["failures"] for window in windows)
    collections = [sum(window["gc"]["collections"][g] for window in windows) for g in range(3)]
    pause_ms = [round(sum(window["gc"]["pause_ms"][g] for window in windows), 2) for g in range(3)]
    longest_ms = [max(window["gc"]["longest_ms"][g] for window in windows) for g in range(3)]
    return {
        "samples": samples,
        "windows": len(windows),
        "served_rps": round(served, 1),
        # The requests due in the counted spans (a Poisson process's count differs from the rate
        # by chance), and per second.
        "arrivals": sum(window["counted"] for window in windows),
        "arrival_rps": round(
            sum(window["counted"] for window in windows)
            / sum(window["counted_s"] for window in windows),
            1,
        ),
        "failures": failures,
        "waited_for_connection": sum(window["waited_for_connection"] for window in windows),
        "p99.9": {"ms": percentile_ms(latency, 99.9), "samples": samples},
        "max_ms": max_ms(latency),
        "lateness_ms": {"p50": percentile_ms(lateness, 50), "p99": percentile_ms(lateness, 99)},
        "windows_behind": sum(window_behind(window) for window in windows),
        "longest_drain_s": round(max(window["drain_s"] for window in windows), 3),
        "app_cpu_busy": round(app_cpu_s / elapsed_s, 3) if elapsed_s else None,
        "gc": {"collections": collections, "pause_ms": pause_ms, "longest_ms": longest_ms},
        **beside_figures(windows),
    }


def summed_failures(failures: Iterable[dict[str, int]]) -> dict[str, int]:
    """Failures by reason, summed over windows."""
    total: Counter[str] = Counter()
    for found in failures:
        total.update(found)
    return dict(total)


def commonest(failures: dict[str, int]) -> str:
    """The reason most failures share (the first of equals, as the windows named them)."""
    return max(failures, key=failures.__getitem__)


def beside_figures(windows: list[dict[str, Any]]) -> dict[str, Any]:
    """What was asked beside the windows (the mixed load's large answers): how many were sent
    and answered, the failures by reason, their latency from each send; nothing without."""
    besides = [window["beside"] for window in windows if "beside" in window]
    if not besides:
        return {}
    latency = merged(beside["latency_us"] for beside in besides)
    failures = summed_failures(beside["failures"] for beside in besides)
    return {
        "beside": {
            "sent": sum(beside["sent"] for beside in besides),
            "completed": sum(beside["completed"] for beside in besides),
            "failures": failures,
            "p50_ms": percentile_ms(latency, 50),
            "p99_ms": percentile_ms(latency, 99),
        }
    }


def latency_ratio(ratio: PairedRatio) -> dict[str, Any]:
    """A ratio of percentiles in the results' vocabulary, flagged by the latency limit: a
    tail's interval is wider than a throughput's by nature (a p99 of 2,000 requests stands on
    its 20 slowest)."""
    figures = ratio.as_dict()
    width = ratio.half_width
    if ratio.estimate is None:
        figures["flags"] = []
    elif width is None:
        figures["flags"] = [
            f"{ratio.pairs} rounds are too few for a 95% interval (need {MIN_PAIRS_FOR_CI})"
        ]
    elif width > LATENCY_CI_HALF_WIDTH_LIMIT:
        figures["flags"] = [
            f"95% CI ±{width:.0%} is wider than ±{LATENCY_CI_HALF_WIDTH_LIMIT:.0%}: more "
            "--rounds narrow it"
        ]
    else:
        figures["flags"] = []
    return figures


def rate_figures(
    windows: list[dict[str, Any]], arms: tuple[str, ...], baseline: str | None, seed: int
) -> dict[str, Any]:
    by_arm = {arm: [window for window in windows if window["arm"] == arm] for arm in arms}
    by_arm = {arm: found for arm, found in by_arm.items() if found}
    counts = round_counts(
        {arm: {w["round"]: w["latency_us"] for w in found} for arm, found in by_arm.items()}
    )
    figures, ratios = paired_percentiles(
        counts, list(PERCENTILES.values()), baseline if baseline in by_arm else None, seed=seed
    )
    arms_out = {}
    for arm, found in by_arm.items():
        arms_out[arm] = arm_figures(found) | {
            name: figures[arm][fraction].as_dict() for name, fraction in PERCENTILES.items()
        }
    return {
        "arms": arms_out,
        "ratios": {
            f"{arm}_over_{baseline}": {
                name: latency_ratio(by_fraction[fraction]) for name, fraction in PERCENTILES.items()
            }
            for arm, by_fraction in ratios.items()
        },
    }


def scenario_figures(
    measured: dict[str, Any], arms: tuple[str, ...], baseline: str | None, seed: int
) -> dict[str, Any]:
    rates = {}
    for rate in measured["rates"]:
        windows = [window for window in measured["windows"] if window["rate"] == rate["label"]]
        rates[rate["label"]] = rate | rate_figures(windows, arms, baseline, seed)
    knees = {}
    for arm in arms:
        by_rate = []
        for rate in sorted(measured["rates"], key=lambda rate: rate["rps"]):
            found = {
                window["round"]: window["latency_us"]
                for window in measured["windows"]
                if window["rate"] == rate["label"] and window["arm"] == arm
            }
            if found:
                by_rate.append((rate["rps"], round_counts({arm: found})[arm]))
        if by_rate:
            knees[arm] = knee_with_interval(by_rate, seed=seed).as_dict()
    return {
        "label": measured["label"],
        **({"beside": measured["beside"]} if "beside" in measured else {}),
        "httperf": httperf_comparison(measured.get("httperf")),
        "capacities": measured["capacities"],
        "capacity_windows": measured["capacity_windows"],
        "refused": measured["refused"],
        "rates": rates,
        "knees": knees,
        "tail_notes": tail_notes(rates),
        "windows": measured["windows"],
    }


def turn_percentiles(
    turns: list[dict[float, int]], fraction: float, resamples: int = 2000, seed: int = 0
) -> tuple[float, float | None, float | None]:
    """A tool's percentile over its turns pooled, and its 95% interval from resampling the
    turns (the few full collections that set a p99 fall in some turns and not others)."""
    values = sorted({value for turn in turns for value in turn})
    counts = np.array([[turn.get(value, 0) for value in values] for turn in turns])
    grid = np.asarray(values)
    estimate = percentile_of(grid, counts.sum(axis=0), fraction)
    assert estimate is not None
    generator = np.random.default_rng(seed)
    drawn = [
        percentile_of(
            grid, counts[generator.integers(0, len(turns), len(turns))].sum(axis=0), fraction
        )
        for _ in range(resamples if len(turns) >= MIN_PAIRS_FOR_CI else 0)
    ]
    found = [value for value in drawn if value is not None]
    if not found:
        return estimate, None, None
    low, high = np.percentile(found, [2.5, 97.5])
    return estimate, float(low), float(high)


def httperf_comparison(check: dict[str, Any] | None) -> dict[str, Any] | None:
    """httperf's p50 and p99 beside the lab generator's over the same load (a connection per
    request, at the same rate, in alternating turns), each tool's turns pooled, per arm. They
    agree within HTTPERF_TOLERANCE_MS, or HTTPERF_TOLERANCE_SHARE of the lab's figure where
    that is more; or, where each tool's 95% interval over its turns is wider than that (a p99
    set by a few full collections), when the two intervals overlap."""
    if check is None or "skipped" in check:
        return check
    arms = {}
    for arm, runs in check["arms"].items():
        ours_turns = [
            {value / 1000: count for value, count in counts_by_value(window["latency_us"]).items()}
            for window in check["lab_windows"][arm]
        ]
        theirs_turns = [
            {float(midpoint): count for midpoint, count in run["histogram"].items()} for run in runs
        ]
        figures: dict[str, Any] = {
            "lab_requests": sum(sum(turn.values()) for turn in ours_turns),
            "httperf_requests": sum(sum(turn.values()) for turn in theirs_turns),
            "httperf_errors": sum(run["errors"] for run in runs),
        }
        if not figures["lab_requests"] or not figures["httperf_requests"]:
            arms[arm] = figures
            continue
        for name, fraction in (("p50", 0.5), ("p99", 0.99)):
            ours, ours_low, ours_high = turn_percentiles(ours_turns, fraction)
            theirs, theirs_low, theirs_high = turn_percentiles(theirs_turns, fraction)
            allowed = max(HTTPERF_TOLERANCE_MS, HTTPERF_TOLERANCE_SHARE * ours)
            overlap = None not in (ours_low, ours_high, theirs_low, theirs_high) and (
                ours_low <= theirs_high and theirs_low <= ours_high  # type: ignore[operator]
            )
            figures[name] = {
                "lab_ms": round(ours, 3),
                "lab_ci95": [rounded(ours_low), rounded(ours_high)],
                "httperf_ms": theirs,
                "httperf_ci95": [rounded(theirs_low), rounded(theirs_high)],
                "difference_ms": round(theirs - ours, 3),
                "allowed_ms": round(allowed, 3),
                "agree": abs(theirs - ours) <= allowed or overlap,
                "by": "within the tolerance"
                if abs(theirs - ours) <= allowed
                else ("overlapping intervals" if overlap else "neither"),
            }
        arms[arm] = figures
    return check | {"comparison": arms}


# A tail is put down to the full collections when the longest of them is at least this share of
# the percentile: requests that arrive during a pause wait for it, and queue behind each other.
TAIL_SHARE = 0.5


def tail_notes(rates: dict[str, dict[str, Any]]) -> list[str]:
    """Where the data can say why a tail is what it is: per paired rate and arm, whether its
    p99 is of the order of its longest full (generation 2) collection."""
    notes = []
    for label, rate in rates.items():
        if rate["stage"] != "paired":
            continue
        for arm, found in rate["arms"].items():
            gc, p99 = found["gc"], found["p99"]["ms"]
            if not gc["collections"][2] or p99 is None:
                continue
            longest = gc["longest_ms"][2]
            share = longest / p99
            verdict = (
                "the tail is the collector's"
                if share >= TAIL_SHARE
                else "the collector explains little of it"
            )
            notes.append(
                f"{arm} at {label}: {gc['collections'][2]} full collections in "
                f"{found['windows']} windows, the longest {longest:.0f} ms, against a p99 of "
                f"{p99:.0f} ms and a max of {found['max_ms']:.0f} ms: {verdict}"
            )
    return notes


def scenario_flags(figures: dict[str, Any]) -> list[str]:
    label = figures["label"]
    flags = [f"{label}: refused {rate['label']}: {rate['reason']}" for rate in figures["refused"]]
    check = figures.get("httperf") or {}
    for arm, comparison in check.get("comparison", {}).items():
        if "p50" not in comparison:
            flags.append(f"{label} at {check['rate']}, {arm}: no answers to compare with httperf")
        for name in ("p50", "p99"):
            found = comparison.get(name)
            if found is not None and not found["agree"]:
                flags.append(
                    f"{label} at {check['rate']}, {arm}: httperf's {name} "
                    f"{found['httperf_ms']:.1f} ms and the lab's {found['lab_ms']:.2f} ms differ "
                    f"by more than {found['allowed_ms']:.1f} ms, and their intervals over the "
                    "turns do not overlap"
                )
    for rate_label, rate in figures["rates"].items():
        for arm, found in rate["arms"].items():
            where = f"{label} at {rate_label} ({rate['rps']:,.0f} r/s), {arm}"
            if found["windows_behind"]:
                flags.append(
                    f"{where}: the generator fell behind in {found['windows_behind']} of "
                    f"{found['windows']} windows (1% of requests more than {LATE_LIMIT_MS:g} ms "
                    "late)"
                )
            if found["waited_for_connection"] and rate["stage"] == "paired":
                flags.append(
                    f"{where}: {found['waited_for_connection']} requests found all "
                    f"--connections in flight and waited for one (counted from their due time)"
                )
            failed = sum(found["failures"].values())
            if failed:
                flags.append(
                    f"{where}: {failed} requests failed (most: {commonest(found['failures'])})"
                )
            beside_failures = found.get("beside", {}).get("failures")
            if beside_failures:
                flags.append(
                    f"{where}: {sum(beside_failures.values())} large answers asked beside the "
                    f"windows failed (most: {commonest(beside_failures)}): the load beside its "
                    "windows differed "
                    "from the other arms'"
                )
        for comparison, ratios in rate["ratios"].items():
            if rate["stage"] != "paired":
                continue
            for percentile, ratio in ratios.items():
                for flag in ratio["flags"]:
                    flags.append(
                        f"{label} at {rate_label}, {comparison.replace('_over_', ' / ')} "
                        f"{percentile}: {flag}"
                    )
    return flags


def build_latency_results(
    settings: LatencySettings,
    pinning: PinningPlan,
    versions: dict[str, Any],
    limits: dict[str, Any],
    measured: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    baseline = baseline_of(settings.apps)
    scenarios = {
        name: scenario_figures(found, settings.apps, baseline, settings.seed)
        for name, found in measured.items()
    }
    flags = [flag for found in scenarios.values() for flag in scenario_flags(found)]
    return {
        "note": SCHEMA_NOTE,
        "settings": {
            "apps": list(settings.apps),
            "baseline": baseline,
            "scenarios": list(settings.scenarios),
            "fractions": list(settings.fractions),
            "rates": list(settings.rates),
            "rounds": settings.pairs,
            "window_s": settings.window_s,
            "settle_s": settings.settle_s,
            "warmup_s": settings.warmup_s,
            "arrivals": settings.process,
            "connections": settings.connections,
            "capacity_users": settings.users,
            "capacity_rounds": settings.capacity_rounds,
            "capacity_window_s": settings.capacity_window_s,
            "overload": settings.overload,
            "overload_rounds": settings.overload_rounds,
            "seed": settings.seed,
            "knee_factor": KNEE_FACTOR,
        },
        "pinning": pinning.as_dict(),
        "versions": versions,
        "generator": limits,
        "scenarios": scenarios,
        "flags": flags,
    }
