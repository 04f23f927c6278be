"""results.json (schema_version 3, see README): the window records, and what they say per arm,
per scenario and per pair of arms, with settings, versions, host facts and flags."""

import json
import os
import statistics
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loadtest.cross_check import AGREEMENT_LIMIT
from loadtest.processes import BenchmarkError
from loadtest.scenarios import SCENARIOS
from loadtest.settings import ARMS
from loadtest.stats import (
    ci_half_width,
    median_with_ci,
    merge_histograms,
    percentile_ms,
    round_or_none,
    summarize,
)
from loadtest.windows import WindowRecord

if TYPE_CHECKING:
    from loadtest.benchmark import ArmLife, ScenarioRun
    from loadtest.locust_runs import LocustRun
    from loadtest.pinning import PinningPlan
    from loadtest.settings import BenchmarkSettings
    from loadtest.startup import StartupSamples

SCHEMA_VERSION = 3
# A ratio is published to within about ±5%: a wider 95% interval is flagged.
CI_HALF_WIDTH_LIMIT = 0.05
# In the synthetic scenario the app alone should be the limit: a window in which it kept less
# than this share of its CPUs busy was limited by something else (load generator, machine).
SATURATION_LIMIT = 0.90
SATURATION_SCENARIO = "synthetic"
# Locust's CPU over a run (start-up included) in % of one core, per load process that has a core
# of its own: above this, the load generator, not the app, may be what limits the windows.
LOCUST_CPU_LIMIT_PERCENT = 80
# The other arms should be idle in a window's counted span. More than this share of the span
# on their CPU (over two 10 ms ticks in a 0.4 s span) means the previous arm's requests were
# still running: the settling time was too short for them.
SPILL_LIMIT = 0.05
SPILL_WINDOWS_LIMIT = 0.10  # ... flagged when more than this share of windows show it
# Programs other than the arms on the (pinned) app CPUs: on a quiet machine about 1% of a CPU
# (kernel work for loopback traffic), up to ~10% in a few windows; more, in more windows,
# means another program (another benchmark?) took the arms' CPU.
FOREIGN_LIMIT = 0.15
MEMORY_FIELDS = ("idle", "peak", "after")


def median_or_none(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def paired_ratios(
    windows: list[WindowRecord], scenario: str, arm: str, baseline: str
) -> list[float]:
    """Per round, the arm's window r/s over the baseline's window r/s in the same round."""
    by_pair: dict[tuple[int, int], dict[str, float]] = {}
    for record in windows:
        if record.scenario == scenario and record.arm in (arm, baseline):
            by_pair.setdefault((record.repeat, record.round), {})[record.arm] = record.rps
    return [
        pair[arm] / pair[baseline]
        for _, pair in sorted(by_pair.items())
        if arm in pair and baseline in pair and pair[baseline] > 0
    ]


def ratio_results(windows: list[WindowRecord], scenario: str, arm: str, baseline: str) -> dict:
    ratios = paired_ratios(windows, scenario, arm, baseline)
    median, low, high = median_with_ci(ratios)
    half_width = ci_half_width(median, low, high)
    # The interval treats every pair as independent; each repeat's own median shows whether
    # fresh processes (a repeat) moved the ratio more than the interval allows.
    per_repeat = []
    for repeat in sorted({record.repeat for record in windows}):
        repeat_ratios = paired_ratios([r for r in windows if r.repeat == repeat], scenario, arm,
                                      baseline)  # fmt: skip
        if repeat_ratios:
            per_repeat.append({"repeat": repeat, "pairs": len(repeat_ratios),
                               "ratio": round(statistics.median(repeat_ratios), 3)})  # fmt: skip
    return {
        "ratio": round_or_none(median, 3),
        "ci95_low": round_or_none(low, 3),
        "ci95_high": round_or_none(high, 3),
        "ci95_half_width": round_or_none(half_width, 4),
        "pairs": len(ratios),
        "pair_min": round_or_none(min(ratios, default=None), 3),
        "pair_max": round_or_none(max(ratios, default=None), 3),
        "per_repeat": per_repeat,
    }


def ratio_flags(figures: dict[str, Any]) -> list[str]:
    """What is wrong with one ratio's interval, in a few words (kept with the ratio)."""
    if not figures["ratio"]:  # no pairs, or an arm served nothing (flagged with its windows)
        return []
    if figures["ci95_half_width"] is None:
        return [f"{figures['pairs']} pairs are too few for a 95% interval (need 6)"]
    if figures["ci95_half_width"] > CI_HALF_WIDTH_LIMIT:
        return [
            f"95% CI ±{figures['ci95_half_width']:.1%} is wider than ±{CI_HALF_WIDTH_LIMIT:.0%}"
        ]
    return []


def ratio_summary_flags(flagged: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """One line for every ratio whose interval is too wide, one for those with too few pairs
    (a --quick run on a busy machine flags most ratios, and nine lines would say one thing)."""
    few = [label for label, figures in flagged if figures["ci95_half_width"] is None]
    wide = [f"{label} ±{figures['ci95_half_width']:.1%}" for label, figures in flagged
            if figures["ci95_half_width"] is not None]  # fmt: skip
    flags = []
    if few:
        flags.append(f"{', '.join(few)}: too few pairs for a 95% interval (need 6); raise --pairs")
    if wide:
        flags.append(
            f"95% CI wider than ±{CI_HALF_WIDTH_LIMIT:.0%}: {', '.join(wide)}. The machine's speed "
            "moved within the pairs, or there were too few of them; rerun when it is quieter, "
            "or add pairs (--pairs, --repeats) to narrow them"
        )
    return flags


def window_flags(windows: list[WindowRecord]) -> list[str]:
    """What the windows of one arm say about the run: empty windows, other programs on the
    app's CPU, the previous arm's requests spilling into the counted span."""
    flags = []
    empty = [record for record in windows if record.successes == 0]
    if empty:
        flags.append(f"{len(empty)} of {len(windows)} windows served no request (their pairs are "
                     "left out); see the app's log")  # fmt: skip
    spans = [(r.other_arms_cpu_s, r.cpu_span_s) for r in windows
             if r.other_arms_cpu_s is not None and r.cpu_span_s]  # fmt: skip
    spilled = [other / span for other, span in spans if other > SPILL_LIMIT * span]
    foreign = [r.foreign_cpu_s / r.cpu_span_s for r in windows
               if r.foreign_cpu_s is not None and r.cpu_span_s]  # fmt: skip
    crowded = [share for share in foreign if share > FOREIGN_LIMIT]
    if foreign and len(crowded) > SPILL_WINDOWS_LIMIT * len(foreign):
        flags.append(
            f"in {len(crowded)} of {len(foreign)} windows other programs used the app's CPU (up "
            f"to {max(crowded):.0%} of it): something else is running (another ./test.sh?); "
            "stop it and rerun"
        )
    if spans and len(spilled) > SPILL_WINDOWS_LIMIT * len(spans):
        flags.append(
            f"in {len(spilled)} of {len(spans)} windows another arm was still busy (up to "
            f"{max(spilled):.0%} of a CPU): the previous arm's requests outlast the settling "
            "time; use fewer --users"
        )
    return flags


def scenario_results(
    name: str,
    arm: str,
    windows: list[WindowRecord],
    lives: list["ArmLife"],
    runs: list["ScenarioRun"],
) -> dict[str, Any]:
    """One arm's figures for one scenario, over all its windows in every repeat."""
    flags = [
        f"verification failed (repeat {life.repeat}): {life.problems[name][0]}"
        for life in lives
        if life.problems.get(name)
    ]
    rps = summarize([record.rps for record in windows])
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
            flags.append(f"no warm-up (repeat {run.repeat}): locust started after this arm's "
                         "warm-up window, so its first windows ran cold")  # fmt: skip
    histogram = merge_histograms(record.histogram for record in windows)
    busy = [record.app_cpu_busy for record in windows if record.app_cpu_busy is not None]
    if name == SATURATION_SCENARIO:
        unsaturated = [value for value in busy if value < SATURATION_LIMIT]
        if unsaturated:
            flags.append(
                f"{len(unsaturated)} of {len(busy)} windows left the app's CPU under "
                f"{SATURATION_LIMIT:.0%} busy (lowest {min(unsaturated):.1%}): something else "
                "limited them (the load generator, or other programs on the machine)"
            )
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
        "app_cpu_ms_per_request": round_or_none(median_or_none(
            [v for r in windows if (v := r.app_cpu_ms_per_request) is not None]), 3),
        "db_cpu_ms_per_request": round_or_none(median_or_none(
            [v for r in windows if (v := r.db_cpu_ms_per_request) is not None]), 3),
        "app_cpu_busy_median": round_or_none(median_or_none(busy), 3),
        "app_cpu_busy_min": round_or_none(min(busy, default=None), 3),
    }  # fmt: skip
    if name == "write":
        acknowledged = sum(run.acknowledged.get(arm, 0) for run in runs)
        stored = sum(run.new_rows.get(arm, 0) for run in runs)
        figures["acknowledged_writes"], figures["new_rows"] = acknowledged, stored
        for run in runs:
            if arm in run.arms and run.acknowledged.get(arm, 0) != run.new_rows.get(arm, 0):
                flags.append(
                    f"write count mismatch (repeat {run.repeat}): {run.acknowledged.get(arm, 0)} "
                    f"acknowledged, {run.new_rows.get(arm, 0)} new rows"
                )
    figures["flags"] = flags
    return figures


def cross_check_results(
    windows: list[WindowRecord],
    locust_ratios: dict[str, dict[str, Any]],
    baseline: str | None,
    tool: str,
) -> tuple[dict[str, Any], list[str]]:
    """The second tool's paired ratios beside locust's; a disagreement above 10% is flagged."""
    ratios: dict[str, dict[str, Any]] = {}
    flags = []
    for scenario in sorted({record.scenario for record in windows}):
        ratios[scenario] = {}
        arms = sorted({record.arm for record in windows if record.scenario == scenario})
        for arm in arms:
            if baseline is None or arm == baseline:
                continue
            figures = ratio_results(windows, scenario, arm, baseline)
            locust_ratio = locust_ratios.get(scenario, {}).get(arm, {}).get("ratio")
            disagreement = (
                abs(figures["ratio"] / locust_ratio - 1)
                if figures["ratio"] is not None and locust_ratio
                else None
            )
            figures["locust_ratio"] = locust_ratio
            figures["disagreement"] = round_or_none(disagreement, 4)
            ratios[scenario][arm] = figures
            if disagreement is not None and disagreement > AGREEMENT_LIMIT:
                flags.append(
                    f"{SCENARIOS[scenario].label} {arm}/{baseline}: locust {locust_ratio:.2f}x and "
                    f"{tool} {figures['ratio']:.2f}x disagree by {disagreement:.0%} (over "
                    f"{AGREEMENT_LIMIT:.0%}): one tool may have limited the windows; compare "
                    "their saturation and rerun"
                )
    by_cell: dict[str, dict[str, list[float]]] = {}
    for record in windows:
        by_cell.setdefault(record.scenario, {}).setdefault(record.arm, []).append(record.rps)
    rps = {
        scenario: {arm: round_or_none(median_or_none(values), 2)
                   for arm, values in sorted(by_cell[scenario].items())}
        for scenario in ratios
    }  # fmt: skip
    return {
        "tool": tool,
        "rps_median": rps,
        "ratios_vs_baseline": ratios,
        "windows": [record.as_dict() for record in windows],
    }, flags


def memory_results(lives: list["ArmLife"]) -> dict[str, Any]:
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
        {"repeat": life.repeat,
         **{f"{moment}_{kind}_mib": getattr(getattr(life, moment), f"{kind}_mib", None)
            for moment in MEMORY_FIELDS for kind in ("rss", "uss")}}
        for life in lives
    ]  # fmt: skip
    return memory


def startup_results(samples: "StartupSamples | None") -> dict[str, Any] | None:
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


def locust_results(runs: list["ScenarioRun"], load_cores: int) -> tuple[list[dict], list[str]]:
    entries, flags = [], []
    for run in runs:
        entries.append({
            "repeat": run.repeat, "scenario": run.scenario,
            "locust_cpu_percent": run.locust.cpu_percent,
            "locust_cpu_warnings": run.locust.cpu_warnings,
            "load_cpus_busy_percent": run.locust.load_cpus_busy_percent,
            "warmup_requests": run.warmup_requests,
            "failures": run.failures,
            "files": {key: f"runs/{run.repeat:02d}/{value}"
                      for key, value in run.locust.files.items()},
        })  # fmt: skip
        where = f"{SCENARIOS[run.scenario].label} (repeat {run.repeat})"
        flags += locust_flags(run.locust, load_cores, where)
    return entries, flags


def locust_flags(locust: "LocustRun", load_cores: int, where: str) -> list[str]:
    flags = []
    if locust.cpu_warnings:
        flags.append(f"{where}: load generator CPU-bound ({locust.cpu_warnings} locust "
                     "warnings)")  # fmt: skip
    if locust.cpu_percent > LOCUST_CPU_LIMIT_PERCENT * load_cores:
        flags.append(f"{where}: load generator near its limit (locust at "
                     f"{locust.cpu_percent:.0f}% CPU)")  # fmt: skip
    return flags


def build_results(
    *,
    settings: "BenchmarkSettings",
    lives: list["ArmLife"],
    runs: list["ScenarioRun"],
    calibration: dict[str, Any] | None,
    host: dict[str, Any],
    startup: "dict[str, StartupSamples] | None" = None,
    database: dict[str, Any],
    pinning: "PinningPlan",
    started_at: datetime,
    finished_at: datetime,
    cross_check_windows: list[WindowRecord] | None = None,
    cross_check_tool: str | None = None,
) -> dict[str, Any]:
    windows = [record for run in runs for record in run.windows]
    apps: dict[str, Any] = {}
    flags: list[str] = []
    for arm in settings.apps:
        arm_lives = [life for life in lives if life.arm == arm]
        scenarios = {}
        for name in settings.scenarios:
            scenarios[name] = scenario_results(
                name, arm,
                [r for r in windows if r.arm == arm and r.scenario == name],
                arm_lives, [run for run in runs if run.scenario == name],
            )  # fmt: skip
            flags += [f"{ARMS[arm].project} {name}: {flag}" for flag in scenarios[name]["flags"]]
        apps[arm] = {
            "versions": next((life.versions for life in arm_lives if life.versions), {}),
            "memory": memory_results(arm_lives),
            "startup": startup_results((startup or {}).get(arm)),
            "scenarios": scenarios,
        }
    ratios: dict[str, dict[str, Any]] = {}
    between: dict[str, dict[str, Any]] = {}  # the extra comparisons, keyed "arm/reference"
    baseline = settings.baseline
    flagged_ratios = []
    for name in settings.scenarios:
        ratios[name], between[name] = {}, {}
        for arm, reference in settings.comparisons:
            figures = ratio_results(windows, name, arm, reference)
            figures["flags"] = ratio_flags(figures)
            if figures["flags"]:
                flagged_ratios.append((f"{SCENARIOS[name].label} {arm}/{reference}", figures))
            if reference == baseline:
                ratios[name][arm] = figures
            else:
                between[name][f"{arm}/{reference}"] = figures
    flags += ratio_summary_flags(flagged_ratios)
    cross_check = None
    if cross_check_tool is not None:
        cross_check, cross_check_flags = cross_check_results(
            cross_check_windows or [], ratios, baseline, cross_check_tool
        )
        flags += cross_check_flags
    load_cores = min(settings.load_processes, len(pinning.load_cpus))
    locust_runs, locust_flags = locust_results(runs, load_cores)
    flags += locust_flags
    fastest = max((record.rps for record in windows), default=None)
    busy = [r.app_cpu_busy for r in windows
            if r.scenario == SATURATION_SCENARIO and r.app_cpu_busy is not None]  # fmt: skip
    load_generator = {
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
    plain_settings = {
        key: (list(value) if isinstance(value, tuple) else value)
        for key, value in asdict(settings).items()
        if key not in ("results_dir", "pin", "calibrate", "ui_port")
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "started_at": started_at.isoformat(),
        "finished_at": finished_at.isoformat(),
        "elapsed_s": round((finished_at - started_at).total_seconds(), 1),
        "settings": {
            **plain_settings,
            "baseline": baseline,
            "pinning": pinning.as_dict(),
            "database": database,
            "arm_order": [
                [life.arm for life in lives if life.repeat == repeat]
                for repeat in range(1, settings.repeats + 1)
            ],
            "access_log": False,
        },
        "host": host,
        "load_generator": load_generator,
        "apps": apps,
        "ratios_vs_baseline": ratios,
        "ratios_between_arms": between,
        "cross_check": cross_check,
        "flags": flags,
        "windows": [record.as_dict() for record in windows],
    }


def create_run_dir(results_dir: Path, started_at: datetime, kind: str | None = None) -> Path:
    """results/<UTC timestamp>/ for a benchmark run, results/<UTC timestamp>-<kind>/ for the
    ladder, micro and profile modes; never an existing one."""
    name = started_at.strftime("%Y%m%dT%H%M%SZ") + (f"-{kind}" if kind else "")
    run_dir = results_dir / name
    try:
        run_dir.mkdir(parents=True, exist_ok=False)
    except FileExistsError:
        raise BenchmarkError(f"{run_dir} already exists: another run started in the same "
                             "second? Start one run at a time") from None  # fmt: skip
    except OSError as error:
        raise BenchmarkError(f"cannot create {run_dir}: {error.strerror}") from None
    return run_dir


def write_results(run_dir: Path, results: dict[str, Any]) -> Path:
    path = run_dir / "results.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    return path


def link_latest(results_dir: Path, run_dir: Path) -> None:
    """results/latest always points at the newest run (replaced atomically)."""
    temporary = results_dir / f".latest-{os.getpid()}"
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(run_dir.name)
    temporary.replace(results_dir / "latest")
