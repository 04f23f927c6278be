"""results.json: raw per-run figures plus settings, versions and host facts (see README)."""

import json
import os
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loadtest.stats import merge_histograms, percentile_ms, ratio, relative_spread, summarize

if TYPE_CHECKING:
    from loadtest.benchmark import Cell
    from loadtest.pinning import PinningPlan
    from loadtest.settings import BenchmarkSettings

SCHEMA_VERSION = 1
SPREAD_LIMIT = 0.10  # repeats of one cell should agree within about 10%
# Locust's CPU over a run (start-up included) in % of one core, per load process that has a core
# of its own: above this, the load generator, not the app, may be what limits the cell.
LOCUST_CPU_LIMIT_PERCENT = 80
# The load side's CPUs (locust, PostgreSQL, the runner) busier than this may cap the cell.
LOAD_CPUS_BUSY_LIMIT_PERCENT = 90
MEMORY_FIELDS = ("idle", "peak", "after")


def round_or_none(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def scenario_results(cells: list["Cell"], name: str, load_cores: int = 1) -> dict[str, Any]:
    """One app's figures for one scenario: medians over repeats, merged latency, flags, runs."""
    flags: list[str] = []
    runs = []
    for cell in cells:
        if cell.problems.get(name):
            flags.append(
                f"verification failed (repeat {cell.repeat + 1}): {cell.problems[name][0]}"
            )
            continue
        run = cell.runs.get(name)
        if run is None:
            continue
        entry = {
            "repeat": cell.repeat + 1,
            "rps": round(run.rps, 2),
            "requests": run.requests,
            "failures": run.failures,
            "duration_s": round(run.elapsed_s, 2),
            "p50_ms": percentile_ms(run.histogram, 0.50),
            "p95_ms": percentile_ms(run.histogram, 0.95),
            "p99_ms": percentile_ms(run.histogram, 0.99),
            "locust_cpu_warnings": run.cpu_warnings,
            "locust_cpu_percent": run.cpu_percent,
            "load_cpus_busy_percent": run.load_cpus_busy_percent,
            "files": {key: f"runs/{cell.repeat + 1:02d}-{cell.app}/{value}"
                      for key, value in run.files.items()},
        }  # fmt: skip
        if name in cell.writes:
            entry["acknowledged_writes"] = run.acknowledged
            entry["new_rows"] = cell.writes[name]
            if run.acknowledged != cell.writes[name]:
                flags.append(
                    f"write count mismatch (repeat {cell.repeat + 1}): "
                    f"{run.acknowledged} acknowledged, {cell.writes[name]} new rows"
                )
        runs.append(entry)

    published = [] if any(cell.problems.get(name) for cell in cells) else runs
    requests = sum(entry["requests"] for entry in published)
    failures = sum(entry["failures"] for entry in published)
    if failures:
        flags.append(f"{failures} of {requests} requests failed")
    cpu_warnings = sum(entry["locust_cpu_warnings"] for entry in published)
    if cpu_warnings:
        flags.append(f"load generator CPU-bound ({cpu_warnings} locust warnings)")
    busiest = max((entry["locust_cpu_percent"] for entry in published), default=0.0)
    if busiest > LOCUST_CPU_LIMIT_PERCENT * load_cores:
        flags.append(f"load generator near its limit (locust at {busiest:.0f}% CPU)")
    busiest_load_cpus = max(
        (entry["load_cpus_busy_percent"] or 0.0 for entry in published), default=0.0
    )
    if busiest_load_cpus > LOAD_CPUS_BUSY_LIMIT_PERCENT:
        flags.append(f"load-side CPUs saturated ({busiest_load_cpus:.0f}% busy)")
    rps_values = [entry["rps"] for entry in published]
    spread = relative_spread(rps_values)
    if spread is not None and spread > SPREAD_LIMIT:
        flags.append(f"repeats disagree: spread {spread:.0%} of the median")
    histogram = merge_histograms(
        cell.runs[name].histogram for cell in cells if name in cell.runs and published
    )
    rps = summarize(rps_values)
    return {
        "rps_median": round_or_none(rps["median"], 2),
        "rps_min": round_or_none(rps["min"], 2),
        "rps_max": round_or_none(rps["max"], 2),
        "rps_spread": round_or_none(spread, 3),
        "p50_ms": percentile_ms(histogram, 0.50),
        "p95_ms": percentile_ms(histogram, 0.95),
        "p99_ms": percentile_ms(histogram, 0.99),
        "requests": requests,
        "failures": failures,
        "flags": flags,
        "runs": runs,
    }


def memory_results(cells: list["Cell"]) -> dict[str, Any]:
    memory: dict[str, Any] = {}
    for moment in MEMORY_FIELDS:
        readings = [getattr(cell, moment) for cell in cells if getattr(cell, moment)]
        for kind in ("rss", "uss"):
            values = [
                value
                for reading in readings
                if (value := getattr(reading, f"{kind}_mib")) is not None
            ]
            memory[f"{moment}_{kind}_mib"] = round_or_none(summarize(values)["median"])
    memory["runs"] = [
        {"repeat": cell.repeat + 1,
         **{f"{moment}_{kind}_mib": getattr(getattr(cell, moment), f"{kind}_mib", None)
            for moment in MEMORY_FIELDS for kind in ("rss", "uss")}}
        for cell in cells
    ]  # fmt: skip
    return memory


def build_results(
    *,
    settings: "BenchmarkSettings",
    cells: list["Cell"],
    calibration: dict[str, Any] | None,
    host: dict[str, Any],
    database: dict[str, Any],
    pinning: "PinningPlan",
    started_at: datetime,
    finished_at: datetime,
) -> dict[str, Any]:
    apps: dict[str, Any] = {}
    for app_name in settings.apps:
        app_cells = sorted((c for c in cells if c.app == app_name), key=lambda c: c.repeat)
        apps[app_name] = {
            "versions": next((cell.versions for cell in app_cells if cell.versions), {}),
            "memory": memory_results(app_cells),
            "scenarios": {
                name: scenario_results(
                    app_cells, name, min(settings.load_processes, len(pinning.load_cpus))
                )
                for name in settings.scenarios
            },
        }
    ratios: dict[str, float | None] = {}
    for name in settings.scenarios:  # null when either app did not run or publish a number
        v1 = apps.get("v1", {}).get("scenarios", {}).get(name, {})
        v2 = apps.get("v2", {}).get("scenarios", {}).get(name, {})
        ratios[name] = round_or_none(ratio(v2.get("rps_median"), v1.get("rps_median")), 3)
    fastest = max(
        (s["rps_median"] for app in apps.values() for s in app["scenarios"].values()
         if s["rps_median"] is not None),
        default=None,
    )  # fmt: skip
    load_generator = {
        "calibration": calibration,
        "fastest_cell_rps": fastest,
        "headroom": round_or_none(ratio(calibration and calibration["rps"], fastest), 2),
        "load_processes": settings.load_processes,
    }
    plain_settings = {
        key: (list(value) if isinstance(value, tuple) else value)
        for key, value in asdict(settings).items()
        if key not in ("results_dir", "pin", "calibrate")
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "started_at": started_at.isoformat(),
        "finished_at": finished_at.isoformat(),
        "elapsed_s": round((finished_at - started_at).total_seconds(), 1),
        "settings": {
            **plain_settings,
            "pinning": pinning.as_dict(),
            "database": database,
            "order": [
                [cell.app for cell in cells if cell.repeat == r] for r in range(settings.repeats)
            ],
            "access_log": False,
        },
        "host": host,
        "load_generator": load_generator,
        "apps": apps,
        "ratios_v2_over_v1": ratios,
    }


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
