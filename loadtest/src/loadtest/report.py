"""The v1-vs-v2 table, in the terminal (rich) and in report.md."""

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from loadtest.scenarios import SCENARIOS
from loadtest.stats import ratio

FLAG_MARK = " ⚠"


def format_number(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def format_ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}x"


def table_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one metric a row, then a v2/v1 column when both apps ran."""
    app_names = list(results["apps"])
    both = app_names == ["v1", "v2"]
    header = ["metric", *(f"Pydantic {name}" for name in app_names)] + (["v2/v1"] if both else [])
    rows: list[list[str]] = []
    scenario_names = results["settings"]["scenarios"]

    def scenario(app: str, name: str) -> dict[str, Any]:
        return results["apps"][app]["scenarios"][name]

    for name in scenario_names:
        cells = []
        for app in app_names:
            figures = scenario(app, name)
            text = format_number(figures["rps_median"])
            if figures["rps_min"] is not None and results["settings"]["repeats"] > 1:
                text += (
                    f" ({format_number(figures['rps_min'])}–{format_number(figures['rps_max'])})"
                )
            cells.append(text + (FLAG_MARK if figures["flags"] else ""))
        ratio_cell = [format_ratio(results["ratios_v2_over_v1"].get(name))] if both else []
        rows.append([f"{SCENARIOS[name].label} r/s", *cells, *ratio_cell])
    for name in scenario_names:
        cells = [
            " / ".join(
                format_number(scenario(app, name)[p], 0) for p in ("p50_ms", "p95_ms", "p99_ms")
            )
            for app in app_names
        ]
        ratio_cell = []
        if both:
            ratio_cell = [
                " / ".join(
                    format_ratio(ratio(scenario("v2", name)[p], scenario("v1", name)[p]))
                    for p in ("p50_ms", "p95_ms", "p99_ms")
                )
            ]
        rows.append([f"{SCENARIOS[name].label} p50 / p95 / p99 ms", *cells, *ratio_cell])
    for moment in ("idle", "peak", "after"):
        cells = []
        for app in app_names:
            memory = results["apps"][app]["memory"]
            cells.append(
                f"{format_number(memory[f'{moment}_rss_mib'])} "
                f"({format_number(memory[f'{moment}_uss_mib'])})"
            )
        ratio_cell = []
        if both:
            ratio_cell = [
                format_ratio(
                    ratio(
                        results["apps"]["v2"]["memory"][f"{moment}_rss_mib"],
                        results["apps"]["v1"]["memory"][f"{moment}_rss_mib"],
                    )
                )
            ]
        rows.append([f"memory {moment}, RSS (USS) MiB", *cells, *ratio_cell])
    return header, rows


def all_flags(results: dict[str, Any]) -> list[str]:
    return [
        f"app_{app} {name}: {flag}"
        for app, figures in results["apps"].items()
        for name, scenario in figures["scenarios"].items()
        for flag in scenario["flags"]
    ]


def headroom_line(results: dict[str, Any]) -> str:
    load = results["load_generator"]
    if not load["calibration"]:
        return "Load generator headroom: not measured (calibration skipped)."
    return (
        f"Load generator headroom: locust drove {format_number(load['calibration']['rps'])} r/s "
        f"against a trivial endpoint, {format_ratio(load['headroom'])} the fastest cell "
        f"({format_number(load['fastest_cell_rps'])} r/s)."
    )


def print_table(results: dict[str, Any], console: Console) -> None:
    header, rows = table_rows(results)
    settings = results["settings"]
    table = Table(
        title=(
            f"{' vs '.join(f'Pydantic {app}' for app in results['apps'])} — "
            f"{settings['users']} users, {settings['duration_s']:g}s × {settings['repeats']} "
            f"repeat{'s' if settings['repeats'] != 1 else ''}, {settings['dataset_size']:,} posts"
        ),
        caption=(
            "r/s: median of repeats (min–max)." if settings["repeats"] > 1 else "r/s: one repeat."
        )
        + (" ⚠: see flags below." if all_flags(results) else ""),
    )
    for index, column in enumerate(header):
        table.add_column(column, justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    console.print(headroom_line(results), highlight=False)
    flags = all_flags(results)
    for flag in flags:
        console.print(f"[bold yellow]⚠ {flag}[/]")
    if not flags:
        console.print("No flags: no failures, no verification problems, no busy load generator.")


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write_report(run_dir: Path, results: dict[str, Any]) -> Path:
    header, rows = table_rows(results)
    settings, host = results["settings"], results["host"]
    versions_rows = [
        [
            library,
            *(str(results["apps"][app]["versions"].get(library, "–")) for app in results["apps"]),
        ]
        for library in (
            "python",
            "fastapi",
            "pydantic",
            "pydantic_compiled",
            "sqlalchemy",
            "psycopg",
        )
    ]
    flags = all_flags(results) or ["none"]
    text = f"""# Pydantic v1 vs v2 — benchmark report

Run {results["started_at"]} → {results["finished_at"]} ({results["elapsed_s"]:.0f}s).

{markdown_table(header, rows)}

r/s is the median over repeats (min–max in brackets); latency percentiles are over every request
of every repeat; memory is the app's whole process tree (RSS, with USS in brackets), median over
repeats: idle after start-up, peak sampled under load, after load. A ⚠ marks a flagged cell.

{headroom_line(results)}

## Flags

{chr(10).join(f"- {flag}" for flag in flags)}

## Settings

| setting | value |
|---|---|
| users | {settings["users"]} |
| measured per scenario | {settings["duration_s"]:g}s, after a {settings["warmup_s"]:g}s warm-up |
| repeats | {settings["repeats"]}, order {" / ".join(" ".join(o) for o in settings["order"])} |
| dataset | {settings["dataset_size"]:,} posts, reset before every app start |
| uvicorn workers | {settings["workers"]} |
| locust processes | {settings["load_processes"]} |
| scenarios | {", ".join(settings["scenarios"])} |
| pinning | {settings["pinning"]["note"]} |
| database | PostgreSQL {settings["database"]["server_version"]} ({settings["database"]["kind"]}) |

## Versions

{markdown_table(["library", *(f"app_{app}" for app in results["apps"])], versions_rows)}

## Host

{host["cpu_model"]}, {host["cores"]} cores ({host["cores_available"]} available), \
{host["memory_gib"]} GiB, {host["os"]}, Python {host["python"]}.
"""
    path = run_dir / "report.md"
    path.write_text(text)
    return path
