"""A benchmark's results.json (docs/results.md): the window records, and what they say per
arm, per scenario and per pair of arms, with settings, versions, host facts and flags."""

import statistics
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from loadtest.analysis.fit import Timetable
from loadtest.analysis.flags import locust_flags, ratio_flags, window_flags
from loadtest.analysis.limits import AGREEMENT_LIMIT, CI_HALF_WIDTH_LIMIT, SATURATION_LIMIT
from loadtest.analysis.paired_windows import ratios_by_repeat
from loadtest.analysis.ratio import SIGNIFICANT_DIGITS, PairedRatio
from loadtest.analysis.stats import round_or_none, summarize
from loadtest.lab.pinning import PinningPlan
from loadtest.lab.startup import StartupSamples
from loadtest.lab.statements import per_request
from loadtest.load.histograms import merge_histograms, percentile_ms
from loadtest.load.windows import WindowRecord
from loadtest.output.text import format_ratio
from loadtest.pipeline.records import ArmLife, ScenarioRun
from loadtest.pipeline.settings import BenchmarkSettings

# In READ synthetic the app alone should be the limit: its windows are checked for saturation.
SATURATION_SCENARIO = "synthetic"
MEMORY_FIELDS = ("idle", "peak", "after")
# The relative error of a figure written to SIGNIFICANT_DIGITS (4): at most half a unit of the
# last digit kept.
ROUNDING = 10.0 ** -(SIGNIFICANT_DIGITS - 1)


def median_or_none(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def ratio_results(
    windows: list[WindowRecord],
    scenario: str,
    arm: str,
    reference: str,
    pilot: int | None = None,
    limit: float = CI_HALF_WIDTH_LIMIT,
) -> dict[str, Any]:
    """The arm's r/s over the reference's, paired by round: a PairedRatio over the repeats (the
    interval that covers a rerun from 5 repeats on; `pilot`: how many of them planned the
    rest), each repeat's own median beside it, and the same for the app's CPU per request."""
    pairs = ratios_by_repeat(windows, scenario, arm, reference)
    ratio = PairedRatio.from_repeats(list(pairs.values()), pilot, limit)
    per_repeat = [
        {"repeat": repeat, "pairs": len(found), "estimate": round(statistics.median(found), 3)}
        for repeat, found in pairs.items()
        if found
    ]
    # The app's CPU per request, paired as the r/s are (no pairs where the harness did not read
    # an arm's process: one reached by URL).
    costs = ratios_by_repeat(windows, scenario, arm, reference, app_cpu_per_request)
    cpu = PairedRatio.from_repeats(list(costs.values()), pilot, limit)
    return ratio.as_dict() | {
        "per_repeat": per_repeat,
        "cpu_per_request": cpu.as_dict() if cpu.pairs else None,
    }


def app_cpu_per_request(record: WindowRecord) -> float | None:
    return record.app_cpu_ms_per_request


def cost_flags(labelled: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Where the throughput's interval and the reciprocal of the CPU-per-request interval do not
    overlap, the throughput did not follow the app's own cost: the arm waited on something else
    (its database, a lock, I/O) or its CPU was not what limited the windows."""
    flags = []
    for label, figures in labelled:
        cpu = figures.get("cpu_per_request")
        if not cpu or None in (figures["ci95_low"], figures["ci95_high"]):
            continue
        if not cpu["ci95_low"] or not cpu["ci95_high"]:
            continue
        low, high = 1 / cpu["ci95_high"], 1 / cpu["ci95_low"]
        # Both sides were written to 4 significant digits: apart by more than that rounding.
        slack = 1 + ROUNDING
        if figures["ci95_high"] * slack < low or figures["ci95_low"] > high * slack:
            flags.append(
                f"{label}: throughput {format_ratio(figures, mark=False)} but app CPU per request "
                f"{format_ratio(cpu, mark=False)} (as throughput {1 / cpu['estimate']:.2f}x "
                f"[{low:.2f}–{high:.2f}]): the throughput did not follow the app's own cost, so "
                "something else set it (the database, a lock, I/O, or a load that kept the "
                "app's CPU from being the limit)"
            )
    return flags


def scenario_results(
    name: str,
    arm: str,
    windows: list[WindowRecord],
    lives: list[ArmLife],
    runs: list[ScenarioRun],
) -> dict[str, Any]:
    """One arm's figures for one scenario, over all its windows in every repeat."""
    rps = summarize([record.rps for record in windows])
    requests = sum(record.requests for record in windows)
    failures = sum(record.failures for record in windows)
    histogram = merge_histograms(record.histogram for record in windows)
    busy = [record.app_cpu_busy for record in windows if record.app_cpu_busy is not None]
    flags = scenario_flags(name, arm, windows, lives, runs, busy)
    figures: dict[str, Any] = {
        "windows": len(windows),
        "rps_median": round_or_none(rps["median"], 2),
        "rps_min": round_or_none(rps["min"], 2),
        "rps_max": round_or_none(rps["max"], 2),
        "requests": requests,
        "failures": failures,
        "p50_ms": percentile_ms(histogram, 0.50),
        "p95_ms": percentile_ms(histogram, 0.95),
        "p99_ms": percentile_ms(histogram, 0.99),
        "app_cpu_ms_per_request": round_or_none(
            median_or_none([v for r in windows if (v := r.app_cpu_ms_per_request) is not None]),
            3,
        ),
        "db_cpu_ms_per_request": round_or_none(
            median_or_none([v for r in windows if (v := r.db_cpu_ms_per_request) is not None]),
            3,
        ),
        "app_cpu_busy_median": round_or_none(median_or_none(busy), 3),
        "app_cpu_busy_min": round_or_none(min(busy, default=None), 3),
    }
    counts = [run.statements[arm] for run in runs if arm in run.statements]
    if counts:  # counted at the arm's engine (lab/statements.py); None: no request used one
        figures["statements_per_request"] = round_or_none(per_request(counts), 2)
    if any(run.writes for run in runs):
        figures |= write_figures(arm, runs, flags)
    figures["flags"] = flags
    return figures


def scenario_flags(
    name: str,
    arm: str,
    windows: list[WindowRecord],
    lives: list[ArmLife],
    runs: list[ScenarioRun],
    busy: list[float],
) -> list[str]:
    """What a reader must know of one arm's windows in one scenario: failed verification or
    requests, the windows' own flags, a cold start, an unsaturated app where it should be."""
    flags = [
        f"verification failed (repeat {life.repeat}): {life.problems[name][0]}"
        for life in lives
        if life.problems.get(name)
    ]
    requests = sum(record.requests for record in windows)
    failures = sum(record.failures for record in windows)
    if failures:
        flags.append(f"{failures} of {requests} requests failed")
    uncounted_failures = sum(run.failures.get(arm, 0) for run in runs) - failures
    if uncounted_failures > 0:
        flags.append(f"{uncounted_failures} requests failed in warm-up or settling time")
    flags += window_flags(windows)
    for run in runs:
        if arm in run.arms and not run.warmup_requests.get(arm):
            flags.append(
                f"no warm-up (repeat {run.repeat}): locust started after this arm's warm-up "
                "window, so its first windows ran cold"
            )
    if name == SATURATION_SCENARIO:
        unsaturated = [value for value in busy if value < SATURATION_LIMIT]
        if unsaturated:
            flags.append(
                f"{len(unsaturated)} of {len(busy)} windows left the app's CPU under "
                f"{SATURATION_LIMIT:.0%} busy (lowest {min(unsaturated):.1%}): something else "
                "limited them (the load generator, or other programs on the machine)"
            )
    return flags


def write_figures(arm: str, runs: list[ScenarioRun], flags: list[str]) -> dict[str, Any]:
    """The writes acknowledged and the rows that appeared (in the lab's database; a compare
    file's service keeps its own), a mismatch added to `flags`."""
    figures = {"acknowledged_writes": sum(run.acknowledged.get(arm, 0) for run in runs)}
    counted = [run for run in runs if run.new_rows is not None]
    if counted:
        figures["new_rows"] = sum((run.new_rows or {}).get(arm, 0) for run in counted)
    for run in counted:
        stored = (run.new_rows or {}).get(arm, 0)
        if arm in run.arms and run.acknowledged.get(arm, 0) != stored:
            flags.append(
                f"write count mismatch (repeat {run.repeat}): {run.acknowledged.get(arm, 0)} "
                f"acknowledged, {stored} new rows"
            )
    return figures


def cross_check_results(
    windows: list[WindowRecord],
    locust_ratios: dict[str, dict[str, Any]],
    baseline: str | None,
    tool: str,
    labels: dict[str, str],
) -> tuple[dict[str, Any], list[str]]:
    """The second tool's paired ratios beside locust's; a disagreement above 10% is flagged."""
    ratios: dict[str, dict[str, Any]] = {}
    flags = []
    for scenario in sorted({record.scenario for record in windows}):
        ratios[scenario] = {}
        arms = sorted({record.arm for record in windows if record.scenario == scenario})
        for arm in arms:
            # An empty window is no pair here too (analysis/paired_windows.py): counted aloud.
            flags += [
                f"{labels[scenario]} {arm} ({tool}): {flag}"
                for flag in window_flags(
                    [r for r in windows if r.scenario == scenario and r.arm == arm]
                )
                if "served no request" in flag
            ]
            if baseline is None or arm == baseline:
                continue
            figures = ratio_results(windows, scenario, arm, baseline)
            locust_ratio = locust_ratios.get(scenario, {}).get(arm, {}).get("estimate")
            disagreement = (
                abs(figures["estimate"] / locust_ratio - 1)
                if figures["estimate"] is not None and locust_ratio
                else None
            )
            figures["locust_ratio"] = locust_ratio
            figures["disagreement"] = round_or_none(disagreement, 4)
            ratios[scenario][arm] = figures
            if disagreement is not None and disagreement > AGREEMENT_LIMIT:
                flags.append(
                    f"{labels[scenario]} {arm}/{baseline}: locust {locust_ratio:.2f}x and "
                    f"{tool} {figures['estimate']:.2f}x disagree by {disagreement:.0%} (over "
                    f"{AGREEMENT_LIMIT:.0%}): one tool may have limited the windows; compare "
                    "their saturation and rerun"
                )
    by_cell: dict[str, dict[str, list[float]]] = {}
    for record in windows:
        by_cell.setdefault(record.scenario, {}).setdefault(record.arm, []).append(record.rps)
    rps = {
        scenario: {
            arm: round_or_none(median_or_none(values), 2)
            for arm, values in sorted(by_cell[scenario].items())
        }
        for scenario in ratios
    }
    return {
        "tool": tool,
        "rps_median": rps,
        "ratios_vs_baseline": ratios,
        "windows": [record.as_dict() for record in windows],
    }, flags


def memory_results(lives: list[ArmLife]) -> dict[str, Any]:
    memory: dict[str, Any] = {}
    for moment in MEMORY_FIELDS:
        readings = [getattr(life, moment) for life in lives if getattr(life, moment)]
        for kind in ("rss", "uss"):
            values = [
                value
                for reading in readings
                if (value := getattr(reading, f"{kind}_mib")) is not None
            ]
            memory[f"{moment}_{kind}_mib"] = round_or_none(median_or_none(values))
    memory["repeats"] = [
        {
            "repeat": life.repeat,
            **{
                f"{moment}_{kind}_mib": getattr(getattr(life, moment), f"{kind}_mib", None)
                for moment in MEMORY_FIELDS
                for kind in ("rss", "uss")
            },
        }
        for life in lives
    ]
    return memory


def startup_results(samples: StartupSamples | None) -> dict[str, Any] | None:
    """Median (min–max) over the fresh starts, with every sample kept."""
    if samples is None:
        return None
    figures: dict[str, Any] = {"samples": len(samples.to_health_s)}
    for key, values in (("to_health_s", samples.to_health_s), ("import_s", samples.import_s)):
        summary = summarize(values)
        figures[key] = round_or_none(summary["median"], 3)
        figures[f"{key}_min"] = round_or_none(summary["min"], 3)
        figures[f"{key}_max"] = round_or_none(summary["max"], 3)
        figures[f"{key}_samples"] = [round(value, 3) for value in values]
    return figures


def locust_results(
    runs: list[ScenarioRun], load_cores: int, labels: dict[str, str]
) -> tuple[list[dict], list[str]]:
    entries, flags = [], []
    for run in runs:
        entries.append(
            {
                "repeat": run.repeat,
                "scenario": run.scenario,
                "locust_cpu_percent": run.locust.cpu_percent,
                "locust_cpu_warnings": run.locust.cpu_warnings,
                "load_cpus_busy_percent": run.locust.load_cpus_busy_percent,
                "warmup_requests": run.warmup_requests,
                "failures": run.failures,
                "files": {
                    key: f"runs/{run.repeat:02d}/{value}" for key, value in run.locust.files.items()
                },
            }
        )
        where = f"{labels[run.scenario]} (repeat {run.repeat})"
        flags += locust_flags(run.locust, load_cores, where)
    return entries, flags


def memory_source(settings: BenchmarkSettings, lives: list[ArmLife]) -> str:
    """What the memory figures are: the process tree's RSS and USS, read directly (local arms,
    and containers where the harness may read their processes), `docker stats`, or a mix of
    both (a container whose processes could not be read in one repeat)."""
    readings = [
        reading for life in lives for reading in (life.idle, life.peak, life.after) if reading
    ]
    without_uss = [reading for reading in readings if reading.uss_mib is None]
    if not settings.docker or not without_uss:
        return "process tree"
    # Some containers could not be read directly: the run's figures are not all of one kind.
    return "docker stats" if len(without_uss) == len(readings) else "mixed"


def build_results(
    *,
    settings: BenchmarkSettings,
    lives: list[ArmLife],
    runs: list[ScenarioRun],
    calibration: dict[str, Any] | None,
    startup: dict[str, StartupSamples] | None = None,
    database: dict[str, Any],
    pinning: PinningPlan,
    cross_check_windows: list[WindowRecord] | None = None,
    cross_check_tool: str | None = None,
    timetables: Mapping[str, Timetable] | None = None,
) -> dict[str, Any]:
    """What results.json holds after its header (modes/session.py); `timetables`: each
    scenario's fitted one (compare, the benchmark's --fit), whose notes are flags."""
    windows = [record for run in runs for record in run.windows]
    labels = {name: settings.plan.scenario(name).label for name in settings.scenarios}
    apps: dict[str, Any] = {}
    flags: list[str] = []
    for arm in settings.apps:
        apps[arm], arm_flags = arm_results(settings, arm, lives, runs, windows, startup, labels)
        flags += arm_flags
    ratios, between, labelled, costs = comparison_results(settings, windows, labels)
    interval_flags = ratio_flags(labelled, settings.more_precision, settings.interval_limit)
    flags += cost_flags(costs) + interval_flags
    cross_check = None
    if cross_check_tool is not None:
        cross_check, cross_check_flags = cross_check_results(
            cross_check_windows or [], ratios, settings.baseline, cross_check_tool, labels
        )
        flags += cross_check_flags
    load_cores = min(settings.load_processes, len(pinning.load_cpus))
    locust_runs, locust_flags = locust_results(runs, load_cores, labels)
    flags += locust_flags
    if timetables is not None:
        flags += [note for timetable in timetables.values() for note in timetable.notes]
    fitted = (
        {}
        if timetables is None
        else {"timetable": {name: timetable.as_dict() for name, timetable in timetables.items()}}
    )
    return {
        "settings": settings_results(settings, lives, labels, pinning, database),
        "load_generator": load_generator_results(settings, windows, calibration, locust_runs),
        "apps": apps,
        "ratios_vs_baseline": ratios,
        "ratios_between_arms": between,
        "cross_check": cross_check,
        **fitted,
        "flags": flags,
        # The flags above that are about the width of intervals only (the others are about
        # the run itself): the reports' one line on whether the run can be trusted reads them.
        "interval_flags": interval_flags,
        "windows": [record.as_dict() for record in windows],
    }


def arm_results(
    settings: BenchmarkSettings,
    arm: str,
    lives: list[ArmLife],
    runs: list[ScenarioRun],
    windows: list[WindowRecord],
    startup: dict[str, StartupSamples] | None,
    labels: dict[str, str],
) -> tuple[dict[str, Any], list[str]]:
    """An arm's figures (versions, memory, start-up, each scenario's), and its scenarios'
    flags, named as the other flags name them: the scenario's label, then the arm."""
    arm_lives = [life for life in lives if life.arm == arm]
    scenarios = {}
    flags: list[str] = []
    for name in settings.scenarios:
        scenarios[name] = scenario_results(
            name,
            arm,
            [record for record in windows if record.arm == arm and record.scenario == name],
            arm_lives,
            [run for run in runs if run.scenario == name],
        )
        flags += [f"{labels[name]} {arm}: {flag}" for flag in scenarios[name]["flags"]]
    figures = {
        "versions": next((life.versions for life in arm_lives if life.versions), {}),
        "memory": memory_results(arm_lives),
        "startup": startup_results((startup or {}).get(arm)),
        "scenarios": scenarios,
    }
    return figures, flags


def comparison_results(
    settings: BenchmarkSettings, windows: list[WindowRecord], labels: dict[str, str]
) -> tuple[
    dict[str, dict[str, Any]],
    dict[str, dict[str, Any]],
    list[tuple[str, PairedRatio]],
    list[tuple[str, dict[str, Any]]],
]:
    """Every comparison's ratios, per scenario: those to the baseline, the others keyed
    "arm/reference"; and each labelled, for the interval and cost flags."""
    ratios: dict[str, dict[str, Any]] = {}
    between: dict[str, dict[str, Any]] = {}
    labelled: list[tuple[str, PairedRatio]] = []
    costs: list[tuple[str, dict[str, Any]]] = []
    for name in settings.scenarios:
        ratios[name], between[name] = {}, {}
        for arm, reference in settings.comparisons:
            figures = ratio_results(
                windows, name, arm, reference, settings.repeats, settings.interval_limit
            )
            label = f"{labels[name]} {arm}/{reference}"
            labelled.append((label, PairedRatio.from_dict(figures, settings.interval_limit)))
            costs.append((label, figures))
            if reference == settings.baseline:
                ratios[name][arm] = figures
            else:
                between[name][f"{arm}/{reference}"] = figures
    return ratios, between, labelled, costs


def load_generator_results(
    settings: BenchmarkSettings,
    windows: list[WindowRecord],
    calibration: dict[str, Any] | None,
    locust_runs: list[dict],
) -> dict[str, Any]:
    """How fast the load generator went on its own, against the fastest window, and how busy
    READ synthetic kept the apps' CPUs."""
    fastest = max((record.rps for record in windows), default=None)
    busy = [
        record.app_cpu_busy
        for record in windows
        if record.scenario == SATURATION_SCENARIO and record.app_cpu_busy is not None
    ]
    return {
        "calibration": calibration,
        "fastest_window_rps": round_or_none(fastest, 1),
        "headroom": round_or_none(
            calibration["rps"] / fastest if calibration and fastest else None, 2
        ),
        "synthetic_app_cpu_busy_min": round_or_none(min(busy, default=None), 3),
        "synthetic_app_cpu_busy_max": round_or_none(max(busy, default=None), 3),
        "load_processes": settings.load_processes,
        "runs": locust_runs,
    }


def settings_results(
    settings: BenchmarkSettings,
    lives: list[ArmLife],
    labels: dict[str, str],
    pinning: PinningPlan,
    database: dict[str, Any],
) -> dict[str, Any]:
    """The run's settings as results.json keeps them, with what the run decided: the arms'
    order in each repeat, where memory was read."""
    plain_settings = {
        key: (list(value) if isinstance(value, tuple) else value)
        for key, value in asdict(settings).items()
        if key not in settings.NOT_IN_RESULTS
    }
    return {
        **plain_settings,
        "baseline": settings.baseline,
        "scenario_labels": labels,
        "pinning": pinning.as_dict(),
        "database": database,
        "arm_order": [
            [life.arm for life in lives if life.repeat == repeat]
            for repeat in range(1, settings.repeats + 1)
        ],
        "access_log": False,
        "memory_source": memory_source(settings, lives),
    }
