"""What a ladder run says (loadtest/ladder.py): per app and rung its r/s and app CPU per request,
its speed-up over response_model (paired with the adjacent response_model window of the same
app, median and 95% CI), its share of the floor, and per rung each app over the baseline app."""

import statistics
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from commons.ladder import BASE_RUNG, RUNGS
from loadtest.locust_runs import LocustRun
from loadtest.pinning import PinningPlan
from loadtest.report import markdown_table
from loadtest.results import (
    CI_HALF_WIDTH_LIMIT,
    SATURATION_LIMIT,
    locust_flags,
    ratio_flags,
    ratio_results,
    window_flags,
)
from loadtest.settings import ARMS, BASELINE, LADDER_WARMUP_S, BenchmarkSettings
from loadtest.stats import ci_half_width, median_with_ci, round_or_none
from loadtest.windows import WindowRecord

FLOOR_RUNG = "floor"
LADDER_SCENARIO = "ladder"
# Marks the r/s figures of a rung on which the app was not saturated (the load generator's).
LOAD_BOUND_MARK = "†"


ARM_SEPARATOR = "/"  # an arm of the ladder is "<app>/<rung>", e.g. "v2/plain_orjson"


def ladder_arm(app: str, rung: str) -> str:
    return f"{app}{ARM_SEPARATOR}{rung}"


def split_arm(arm: str) -> tuple[str, str]:
    app, _, rung = arm.rpartition(ARM_SEPARATOR)
    return app, rung


def group_values(
    records: list[WindowRecord],
    arm: str,
    reference: str,
    value: Callable[[WindowRecord, WindowRecord], float | None],
) -> dict[int, float]:
    """Per group (the windows sharing a `round`), value(arm's window, reference's window)."""
    groups: dict[int, dict[str, WindowRecord]] = {}
    for record in records:
        if record.arm in (arm, reference):
            groups.setdefault(record.round, {})[record.arm] = record
    values = {}
    for index, group in groups.items():
        if arm in group and reference in group:
            figure = value(group[arm], group[reference])
            if figure is not None:
                values[index] = figure
    return values


def rps_speedup(rung: WindowRecord, base: WindowRecord) -> float | None:
    return rung.rps / base.rps if base.rps > 0 else None


def cpu_speedup(rung: WindowRecord, base: WindowRecord) -> float | None:
    """How many times less app CPU a request took on the rung than on response_model."""
    rung_ms, base_ms = rung.app_cpu_ms_per_request, base.app_cpu_ms_per_request
    return base_ms / rung_ms if rung_ms and base_ms else None


SPEEDUPS = {"rps": rps_speedup, "cpu": cpu_speedup}


def speedups_by_round(
    records: list[WindowRecord], app: str, rung: str, groups_per_round: int, kind: str
) -> dict[int, float]:
    """The rung's speed-up over its adjacent response_model window, per round (a rung has one
    group a round); 1 for response_model itself."""
    base = ladder_arm(app, BASE_RUNG)
    if rung == BASE_RUNG:
        rounds = {record.round // groups_per_round for record in records if record.arm == base}
        return dict.fromkeys(rounds, 1.0)
    values = group_values(records, ladder_arm(app, rung), base, SPEEDUPS[kind])
    return {group // groups_per_round: value for group, value in values.items()}


def interval(values: list[float]) -> dict[str, Any]:
    median, low, high = median_with_ci(values)
    return {
        "median": round_or_none(median, 3),
        "ci95_low": round_or_none(low, 3),
        "ci95_high": round_or_none(high, 3),
        "ci95_half_width": round_or_none(ci_half_width(median, low, high), 4),
        "pairs": len(values),
    }


def median_of(records: list[WindowRecord], value: Callable[[WindowRecord], float | None]):  # noqa: ANN201
    values = [figure for record in records if (figure := value(record)) is not None]
    return statistics.median(values) if values else None


def rung_figures(
    records: list[WindowRecord], app: str, rung: str, groups_per_round: int
) -> dict[str, Any]:
    own = [record for record in records if record.arm == ladder_arm(app, rung)]
    rps = median_of(own, lambda record: record.rps)
    cpu_ms = median_of(own, lambda record: record.app_cpu_ms_per_request)
    busy = median_of(own, lambda record: record.app_cpu_busy)
    figures: dict[str, Any] = {
        "rps": round_or_none(rps, 1),
        "app_cpu_us_per_request": round_or_none(cpu_ms * 1000 if cpu_ms else None, 1),
        "app_cpu_busy": round_or_none(busy, 3),
        # The app kept under SATURATION_LIMIT of its CPU busy: its r/s is the load generator's.
        "load_bound": busy is not None and busy < SATURATION_LIMIT,
        "windows": len(own),
        "failures": sum(record.failures for record in own),
    }
    if rung == BASE_RUNG:
        figures |= {"speedup_vs_response_model": 1.0, "cpu_speedup_vs_response_model": 1.0}
        return figures
    speedup, by_cpu = (
        interval(list(speedups_by_round(records, app, rung, groups_per_round, kind).values()))
        for kind in ("rps", "cpu")
    )
    figures |= {
        "speedup_vs_response_model": speedup["median"],
        "speedup": speedup,
        "cpu_speedup_vs_response_model": by_cpu["median"],
        "cpu_speedup": by_cpu,
    }
    return figures


def add_floor_shares(
    records: list[WindowRecord],
    app: str,
    figures_by_rung: dict[str, dict[str, Any]],
    groups_per_round: int,
) -> None:
    """A rung's speed as a share of the floor's, per round: its speed-up over response_model
    over the floor's in the same round (each against its own adjacent response_model window,
    so the machine's drift between the two groups cancels), by r/s and by app CPU."""
    if FLOOR_RUNG not in figures_by_rung:
        return
    for kind, key in (("rps", "share_of_floor"), ("cpu", "share_of_floor_by_cpu")):
        floor = speedups_by_round(records, app, FLOOR_RUNG, groups_per_round, kind)
        for rung, figures in figures_by_rung.items():
            own = speedups_by_round(records, app, rung, groups_per_round, kind)
            shares = [own[round_] / floor[round_] for round_ in sorted(own.keys() & floor.keys())
                      if floor[round_] > 0]  # fmt: skip
            figures[key] = interval(shares)


def comparison_figures(
    records: list[WindowRecord], apps: tuple[str, ...], rungs: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """Per rung, each app's r/s over the baseline app's (v2 over v1), paired by group."""
    if BASELINE not in apps:
        return {}
    comparisons: dict[str, dict[str, Any]] = {}
    for app in (app for app in apps if app != BASELINE):
        per_rung = {}
        for rung in rungs:
            per_rung[rung] = ratio_results(
                records, LADDER_SCENARIO, ladder_arm(app, rung), ladder_arm(BASELINE, rung)
            )
            per_rung[rung].pop("per_repeat")  # one repeat: it would repeat the ratio
        comparisons[f"{app}_over_{BASELINE}"] = per_rung
    return comparisons


def ladder_flags(
    ladder: dict[str, dict[str, dict[str, Any]]],
    comparisons: dict[str, dict[str, Any]],
    records: list[WindowRecord],
    locust: LocustRun,
    load_cores: int,
    calibration: dict[str, Any] | None,
) -> list[str]:
    """The benchmark's own checks (loadtest/results.py), said per app: failures, empty or
    crowded windows, a busy load generator, intervals too wide or missing; and the rungs whose
    r/s is the load generator's."""
    flags = []
    intervals: list[tuple[str, dict[str, Any]]] = []
    for app, rungs in ladder.items():
        failed = [f"{rung} {figures['failures']}" for rung, figures in rungs.items()
                  if figures["failures"]]  # fmt: skip
        if failed:
            flags.append(f"{app}: failed requests (not counted as throughput): {', '.join(failed)}")
        app_windows = [record for record in records if split_arm(record.arm)[0] == app]
        flags += [f"{app}: {flag}" for flag in window_flags(app_windows)]
        load_bound = [rung for rung, figures in rungs.items() if figures["load_bound"]]
        if load_bound:
            ceiling = (f" (locust reached {calibration['rps']:,.0f} r/s on a trivial endpoint; "
                       "these bodies cost it more)" if calibration else "")  # fmt: skip
            flags.append(
                f"{app}: {LOAD_BOUND_MARK} the app kept under {SATURATION_LIMIT:.0%} of its CPU "
                f"busy on {', '.join(load_bound)}: their r/s, r/s speed-ups and r/s shares are "
                f"the load generator's limit, not the app's{ceiling}. Read their CPU columns: "
                "an app with spare CPU pays a little more per request (more event-loop "
                "wake-ups), so their CPU speed-ups, if anything, understate them"
            )
        for rung, figures in rungs.items():
            for key, what in (("speedup", "r/s"), ("cpu_speedup", "CPU")):
                if key in figures and not (key == "speedup" and figures["load_bound"]):
                    labelled = {"ratio": figures[key]["median"], **figures[key]}
                    intervals.append((f"{app} {rung} ({what})", labelled))
    for name, per_rung in comparisons.items():
        intervals += [(f"{rung} {name.replace('_over_', '/')}", figures)
                      for rung, figures in per_rung.items()]  # fmt: skip
    flags += locust_flags(locust, load_cores, "ladder")
    return flags + interval_flags(intervals)


def interval_flags(intervals: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The ladder has about 45 ratios: one line for those with too few pairs, one for those
    wider than the benchmark's ±5%, naming the widest."""
    flagged = [(label, figures) for label, figures in intervals if ratio_flags(figures)]
    few = [label for label, figures in flagged if figures["ci95_half_width"] is None]
    wide = sorted(((figures["ci95_half_width"], label) for label, figures in flagged
                   if figures["ci95_half_width"] is not None), reverse=True)  # fmt: skip
    flags = []
    if few:
        flags.append(f"{len(few)} of {len(intervals)} ratios have too few pairs for a 95% "
                     "interval (need 6); raise --pairs")  # fmt: skip
    if wide:
        widest = ", ".join(f"{label} ±{width:.0%}" for width, label in wide[:3])
        flags.append(
            f"{len(wide)} of {len(intervals)} ratios have a 95% CI wider than "
            f"±{CI_HALF_WIDTH_LIMIT:.0%} (widest: {widest}): the machine's speed moved within "
            "the pairs; rerun when it is quieter, or raise --pairs"
        )
    return flags


def build_ladder_results(
    *,
    settings: BenchmarkSettings,
    rungs: tuple[str, ...],
    records: list[WindowRecord],
    locust: LocustRun,
    calibration: dict[str, Any] | None,
    versions: dict[str, dict[str, Any]],
    host: dict[str, object],
    pinning: PinningPlan,
    started_at: datetime,
    finished_at: datetime,
) -> dict[str, Any]:
    groups_per_round = len(rungs) - 1  # one group per rung above response_model
    comparisons = comparison_figures(records, settings.apps, rungs)
    ladder: dict[str, dict[str, dict[str, Any]]] = {}
    for app in settings.apps:
        ladder[app] = {rung: rung_figures(records, app, rung, groups_per_round) for rung in rungs}
        add_floor_shares(records, app, ladder[app], groups_per_round)
    return {
        "kind": "ladder",
        "started_at": started_at.isoformat(),
        "finished_at": finished_at.isoformat(),
        "host": host,
        "pinning": pinning.as_dict(),
        "settings": describe_settings(settings),
        "versions": versions,
        "rungs": {rung: RUNGS[rung] for rung in rungs},
        "ladder": ladder,
        "comparisons": comparisons,
        "calibration": calibration,
        "locust": {
            "cpu_percent": locust.cpu_percent,
            "cpu_warnings": locust.cpu_warnings,
            "load_cpus_busy_percent": locust.load_cpus_busy_percent,
        },  # fmt: skip
        "flags": ladder_flags(
            ladder,
            comparisons,
            records,
            locust,
            min(settings.load_processes, len(pinning.load_cpus)) or 1,
            calibration,
        ),  # fmt: skip
        "windows": [record.as_dict() for record in records],
    }


def with_interval(figures: dict[str, Any] | None, digits: int = 2) -> str:
    if not figures or figures["median"] is None:
        return "–"
    text = f"{figures['median']:.{digits}f}x"
    if figures["ci95_low"] is not None:
        text += f" [{figures['ci95_low']:.{digits}f}–{figures['ci95_high']:.{digits}f}]"
    return text


LADDER_HEADER = [
    "rung", "r/s", "× response_model (r/s) [95% CI]", "% of floor (r/s)",
    "app CPU µs/request", "× response_model (CPU) [95% CI]", "% of floor (CPU)",
]  # fmt: skip


def share(figures: dict[str, Any] | None, mark: str = "") -> str:
    if not figures or figures["median"] is None:
        return "–"
    text = f"{figures['median']:.0%}"
    if figures["ci95_low"] is not None and figures["median"] != 1:
        text += f" [{figures['ci95_low']:.0%}–{figures['ci95_high']:.0%}]"
    return text + mark


def ladder_rows(figures_by_rung: dict[str, dict[str, Any]]) -> list[list[str]]:
    floor = figures_by_rung.get(FLOOR_RUNG, {})
    floor_mark = LOAD_BOUND_MARK if floor.get("load_bound") else ""
    rows = []
    for rung, figures in figures_by_rung.items():
        mark = LOAD_BOUND_MARK if figures["load_bound"] else ""
        base = rung == BASE_RUNG
        rows.append([
            rung,
            "–" if figures["rps"] is None else f"{figures['rps']:,.0f}{mark}",
            "1 (reference)" if base else with_interval(figures.get("speedup")) + mark,
            share(figures.get("share_of_floor"), mark or floor_mark),
            "–" if figures["app_cpu_us_per_request"] is None
            else f"{figures['app_cpu_us_per_request']:,.0f}",
            "1 (reference)" if base else with_interval(figures.get("cpu_speedup")),
            share(figures.get("share_of_floor_by_cpu")),
        ])  # fmt: skip
    return rows


def comparison_rows(comparisons: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    names = list(comparisons)
    header = ["rung"] + [f"{name.replace('_over_', ' / ')} r/s [95% CI]" for name in names]
    rungs = list(next(iter(comparisons.values()))) if comparisons else []
    rows = []
    for rung in rungs:
        cells = []
        for name in names:
            figures = comparisons[name][rung]
            cells.append(with_interval({"median": figures["ratio"], **figures}))
        rows.append([rung, *cells])
    return header, rows


def app_title(results: dict[str, Any], app: str) -> str:
    pydantic = results["versions"].get(app, {}).get("pydantic", "?")
    return f"{app} ({ARMS[app].summary}, Pydantic {pydantic}): the serialisation ladder"


CAPTION = (
    "r/s and app CPU µs/request: medians of the rung's windows. ×: median of the ratios to the "
    "adjacent response_model window of the same app, 95% CI in brackets. % of floor: the rung's "
    "× over the floor's × in the same round (the rung's speed as a share of the floor's). "
    f"{LOAD_BOUND_MARK}: the app had spare CPU, so the r/s figure is the load generator's."
)


def print_ladder(results: dict[str, Any], console: Console) -> None:
    for app, figures_by_rung in results["ladder"].items():
        table = Table(title=app_title(results, app), caption=CAPTION)
        for index, column in enumerate(LADDER_HEADER):
            table.add_column(column, justify="left" if index == 0 else "right", no_wrap=index == 0)
        for row in ladder_rows(figures_by_rung):
            table.add_row(*row)
        console.print(table)
    if results["comparisons"]:
        header, rows = comparison_rows(results["comparisons"])
        table = Table(title="Per rung, each app over v1 (paired windows of the same rung)")
        for index, column in enumerate(header):
            table.add_column(column, justify="left" if index == 0 else "right", no_wrap=index == 0)
        for row in rows:
            table.add_row(*row)
        console.print(table)
    for flag in results["flags"]:
        console.print(f"[bold yellow]⚠ {flag}[/]", highlight=False)


def write_ladder_report(run_dir: Path, results: dict[str, Any]) -> Path:
    host = results["host"]
    lines = [
        "# The serialisation ladder",
        "",
        f"{results['started_at']} · {host['cpu_model']}, {host['cores']} cores · "
        f"{results['settings']['rounds']} rounds of {results['settings']['window_s']:g}s windows"
        f" · {results['pinning']['note']}",
        "",
        "| rung | what it does |",
        "|---|---|",
        *[f"| {rung} | {text} |" for rung, text in results["rungs"].items()],
        "",
    ]
    for app, figures_by_rung in results["ladder"].items():
        lines += [f"## {app_title(results, app)}", "",
                  markdown_table(LADDER_HEADER, ladder_rows(figures_by_rung)), ""]  # fmt: skip
    if results["comparisons"]:
        header, rows = comparison_rows(results["comparisons"])
        lines += ["## Per rung, each app over v1", "", markdown_table(header, rows), ""]
    lines += [CAPTION, ""]
    lines += [f"- ⚠ {flag}" for flag in results["flags"]] or ["No flags."]
    path = run_dir / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def describe_settings(settings: BenchmarkSettings) -> dict[str, object]:
    """The settings that shape a ladder run, for results.json."""
    return {
        "apps": list(settings.apps), "rounds": settings.pairs, "window_s": settings.window_s,
        "settle_s": settings.settle_s, "warmup_s_per_arm": LADDER_WARMUP_S,
        "users": settings.users, "workers": settings.workers,
        "load_processes": settings.load_processes, "pin": settings.pin,
    }  # fmt: skip
