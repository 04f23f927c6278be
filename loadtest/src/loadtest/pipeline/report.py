"""The benchmark's report in the terminal and in report.md (report.html: html.py)."""

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from loadtest.lab.files import write_text_safely
from loadtest.lab.host import interpreter_text
from loadtest.output.text import markdown_table, print_flags, print_table
from loadtest.pipeline.html import write_html_report
from loadtest.pipeline.tables import (
    VERSION_LIBRARIES,
    fitted_windows_text,
    flags_line,
    load_generator_lines,
    ratio_caption,
    ratio_sentence,
    summary_lines,
    table_rows,
    timetable_rows,
    timetable_why_lines,
    title,
)


def write_reports(run_dir: Path, results: dict[str, Any]) -> list[Path]:
    """report.md and report.html (and ratios.svg), from results.json's content alone."""
    return [write_report(run_dir, results), write_html_report(run_dir, results)]


def print_report(results: dict[str, Any], console: Console) -> None:
    """The answer first (three lines and the flags' verdict), then the table, then the flags."""
    header, rows = table_rows(results, separator="\n")
    flags = results["flags"]
    for line in summary_lines(results):
        console.print(line, highlight=False)
    console.print(Text(flags_line(results), style="bold"))
    print_table(
        console,
        header,
        rows,
        title=title(results),
        caption=f"r/s: median of windows (min–max). {ratio_caption(results)} "
        "CPU: the app's ms per request (PostgreSQL's after it in "
        "parentheses, where it was measured)." + (" ⚠: see flags below." if flags else ""),
    )
    for line in load_generator_lines(results):
        console.print(line, highlight=False)
    print_flags(console, flags)


def write_report(run_dir: Path, results: dict[str, Any]) -> Path:
    header, rows = table_rows(results)
    settings, host = results["settings"], results["host"]
    arms = list(results["apps"])
    versions_rows = [
        [library, *(str(results["apps"][arm]["versions"].get(library, "–")) for arm in arms)]
        for library in VERSION_LIBRARIES
    ]
    flags = results["flags"] or ["none"]
    windows = (
        fitted_windows_text(results)
        or f"{settings['window_s']:g}s windows (the first {settings['settle_s']:g}s of each not "
        "counted)"
    )
    why = timetable_why_lines(results)
    how = (
        "## Timetable (--fit)\n\nFitted per scenario on fresh arms before the repeats, from a "
        "probe at 1 to 32 users (docs/compare.md):"
        if settings.get("fit", True)
        else "## Timetable\n\nPer scenario: its own where it declares one (load/scenarios.py), "
        "the run's for the others:"
    )
    timetable_section = (
        how + "\n\n" + "\n".join(f"- {line}" for line in why) + "\n\n" if why else ""
    )
    text = f"""# {" vs ".join(arms)} — benchmark report

{title(results)}. Run {results["started_at"][:19]} → {results["finished_at"][:19]} UTC \
({results["elapsed_s"]:.0f}s).

{chr(10).join(f"- {line}" for line in summary_lines(results))}

**{flags_line(results)}**

{markdown_table(header, rows)}

{method_paragraph(results, windows)}

{chr(10).join(load_generator_lines(results))}

{timetable_section}## Flags

{chr(10).join(f"- {flag}" for flag in flags)}

{settings_section(results)}

## Versions

{markdown_table(["library", *arms], versions_rows)}

## Host

{host["cpu_model"]}, {host["cores"]} cores ({host["cores_available"]} available), \
{host["memory_gib"]} GiB, {host["os"]}, {interpreter_text(host)}.
"""
    path = run_dir / "report.md"
    write_text_safely(path, text)
    return path


def method_paragraph(results: dict[str, Any], windows: str) -> str:
    """How the run measured: the scenarios, the timetable, and what each figure is."""
    settings = results["settings"]
    return f"""READ is `GET /posts?per_page=100` (100 posts from PostgreSQL), READ synthetic
`GET /posts_synthetic?per_page=100` (100 posts built in memory), WRITE `POST /posts`.
Every arm was alive for the whole repeat, and they were loaded in turn (pinning:
{settings["pinning"]["note"]}): per scenario one locust run alternated the load between them
in {windows}, {settings["pairs"]} rounds per repeat in rotating order. r/s is the median over an
arm's windows (min–max in brackets). {ratio_sentence(results)} Latency percentiles are over \
every counted request; CPU per request is the app's
process tree (and the embedded PostgreSQL's) during its windows, median over windows; memory
is the app's process tree (RSS, with USS in brackets; with `--docker`, the container's usage
as `docker stats` reports it), median over repeats: idle after
start-up, peak under load, after load. Start-up is median (min–max) over fresh starts of each
arm, in turn, from launch to the first 200 on `/health`; the import is `import <app module>`
inside those starts (it builds the app and opens its first database connection). A ⚠ marks a
flagged cell."""


def settings_section(results: dict[str, Any]) -> str:
    """The run's settings as a table (the fitted timetable's rows first, where it has one)."""
    settings = results["settings"]
    database = settings["database"]
    order = " / ".join(" ".join(arms) for arms in settings["arm_order"])
    timetable_table = "\n".join(f"| {name} | {value} |" for name, value in timetable_rows(results))
    return f"""## Settings

| setting | value |
|---|---|
{timetable_table}
| pairs (rounds) per scenario and repeat | {settings["pairs"]} |
| warm-up | {settings["warmup_s"]:g}s per arm before each scenario, discarded |
| repeats | {settings["repeats"]} (fresh processes), arm order {order} |
| dataset | {settings["dataset_size"]:,} posts, reset before every repeat |
| uvicorn workers | {settings["workers"]} |
| locust processes | {settings["load_processes"]} |
| scenarios | {", ".join(settings["scenarios"])} |
| pinning | {settings["pinning"]["note"]} |
| database | PostgreSQL {database["server_version"]} ({database["kind"]}) |"""
