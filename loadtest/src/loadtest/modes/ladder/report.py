"""The ladder's report in the terminal and in report.md, from results.json alone."""

from pathlib import Path
from typing import Any

from rich.console import Console

from commons.ladder import BASE_RUNG
from loadtest.lab.arms import ARMS
from loadtest.lab.files import write_text_safely
from loadtest.modes.ladder.results import FLOOR_RUNG, LOAD_BOUND_MARK
from loadtest.output.text import (
    format_ratio,
    format_share,
    markdown_table,
    print_flags,
    print_table,
    pydantic_heading,
)

LADDER_HEADER = [
    "rung",
    "r/s",
    "× response_model (r/s) [95% CI]",
    "% of floor (r/s)",
    "app CPU µs/request",
    "× response_model (CPU) [95% CI]",
    "% of floor (CPU)",
]


def ladder_rows(figures_by_rung: dict[str, dict[str, Any]]) -> list[list[str]]:
    floor = figures_by_rung.get(FLOOR_RUNG, {})
    floor_mark = LOAD_BOUND_MARK if floor.get("load_bound") else ""
    rows = []
    for rung, figures in figures_by_rung.items():
        mark = LOAD_BOUND_MARK if figures["load_bound"] else ""
        base = rung == BASE_RUNG
        cpu_us = figures["app_cpu_us_per_request"]
        rows.append(
            [
                rung,
                "–" if figures["rps"] is None else f"{figures['rps']:,.0f}{mark}",
                "1 (reference)"
                if base
                else format_ratio(figures.get("speedup"), mark=False) + mark,
                format_share(figures.get("share_of_floor"), mark or floor_mark),
                "–" if cpu_us is None else f"{cpu_us:,.0f}",
                "1 (reference)" if base else format_ratio(figures.get("cpu_speedup"), mark=False),
                format_share(figures.get("share_of_floor_by_cpu")),
            ]
        )
    return rows


def comparison_rows(comparisons: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    names = list(comparisons)
    header = ["rung"] + [f"{name.replace('_over_', ' / ')} r/s [95% CI]" for name in names]
    rungs = list(next(iter(comparisons.values()))) if comparisons else []
    rows = []
    for rung in rungs:
        cells = []
        for name in names:
            cells.append(format_ratio(comparisons[name][rung], mark=False))
        rows.append([rung, *cells])
    return header, rows


def app_title(results: dict[str, Any], app: str) -> str:
    versions = results["versions"].get(app) or {"pydantic": "?"}
    label = ARMS[app].label if app in ARMS else app
    return f"{app} ({label}, {pydantic_heading(versions)}): the serialisation ladder"


CAPTION = (
    "r/s and app CPU µs/request: medians of the rung's windows. ×: median of the ratios to the "
    "adjacent response_model window of the same app, 95% CI in brackets. % of floor: the rung's "
    "× over the floor's × in the same round (the rung's speed as a share of the floor's). "
    f"{LOAD_BOUND_MARK}: the app had spare CPU, so the r/s figure is the load generator's."
)


def print_report(results: dict[str, Any], console: Console) -> None:
    for app, figures_by_rung in results["ladder"].items():
        print_table(
            console,
            LADDER_HEADER,
            ladder_rows(figures_by_rung),
            title=app_title(results, app),
            caption=CAPTION,
        )
    if results["comparisons"]:
        header, rows = comparison_rows(results["comparisons"])
        print_table(
            console,
            header,
            rows,
            title="Per rung, each app over v1 (paired windows of the same rung)",
        )
    print_flags(console, results["flags"])


def write_reports(run_dir: Path, results: dict[str, Any]) -> list[Path]:
    return [write_report(run_dir, results)]


def write_report(run_dir: Path, results: dict[str, Any]) -> Path:
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
        lines += [
            f"## {app_title(results, app)}",
            "",
            markdown_table(LADDER_HEADER, ladder_rows(figures_by_rung)),
            "",
        ]
    if results["comparisons"]:
        header, rows = comparison_rows(results["comparisons"])
        lines += ["## Per rung, each app over v1", "", markdown_table(header, rows), ""]
    lines += [CAPTION, ""]
    lines += [f"- ⚠ {flag}" for flag in results["flags"]] or ["No flags."]
    path = run_dir / "report.md"
    write_text_safely(path, "\n".join(lines) + "\n")
    return path
