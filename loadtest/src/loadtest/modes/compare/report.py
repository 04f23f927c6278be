"""A compare run's report: the benchmark's table and lines (from results.json alone) in the
terminal, report.md and report.html, with what the file declared and where answers differed."""

from html import escape
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from loadtest.analysis.clusters import CLUSTER_METHOD
from loadtest.lab.files import write_text_safely
from loadtest.lab.host import interpreter_text
from loadtest.output.html import html_table
from loadtest.output.text import markdown_table
from loadtest.pipeline import charts
from loadtest.pipeline.html import run_page
from loadtest.pipeline.report import print_report as print_benchmark_report
from loadtest.pipeline.tables import (
    comparisons,
    fitted_windows_text,
    flags_line,
    load_generator_lines,
    scenario_label,
    summary_lines,
    table_rows,
    title,
)


def write_reports(run_dir: Path, results: dict[str, Any]) -> list[Path]:
    """report.md and report.html (and ratios.svg), from results.json's content alone."""
    return [write_report(run_dir, results), write_html_report(run_dir, results)]


def print_report(results: dict[str, Any], console: Console) -> None:
    console.print(Text(f"Compare: {results['settings']['file']}", style="bold"))
    print_benchmark_report(results, console)


def arms_rows(results: dict[str, Any]) -> list[list[str]]:
    """What each arm was: its label, and its command or the URL it was reached on."""
    rows = []
    for name, service in results["settings"]["services"].items():
        if service["command"]:
            how = " ".join(service["command"]) + f" (in {service['cwd']})"
            if not service["own_process"]:
                how += " (a launcher: no CPU or memory figures)"
        else:
            how = f"already running at {service['url']}"
        baseline = " (baseline)" if name == results["settings"]["baseline"] else ""
        rows.append([name + baseline, service["label"], how, service["health"]])
    return rows


SCENARIO_HEADER = ["scenario", "request", "status", "compared by kind only (vary)"]


def scenario_rows(results: dict[str, Any]) -> list[list[str]]:
    return [
        [
            scenario_label(results, name),
            f"{request['method']} {request['path']}",
            str(request["status"]),
            (", ".join(request["vary"]) or "–") if "vary" in request else "not recorded",
        ]
        for name, request in results["settings"]["requests"].items()
    ]


def difference_lines(results: dict[str, Any]) -> list[str]:
    return [
        f"{scenario_label(results, name)}, {arm}: {line}"
        for name, per_arm in results.get("differences", {}).items()
        for arm, lines in per_arm.items()
        for line in lines
    ]


def write_report(run_dir: Path, results: dict[str, Any]) -> Path:
    header, rows = table_rows(results)
    settings, host = results["settings"], results["host"]
    differences = difference_lines(results)
    differences_text = (
        "\n".join(f"- {line}" for line in differences)
        if differences
        else "None: after normalising ("
        + (", ".join(settings["normalisations"]) or "nothing")
        + "), every arm answered every scenario as the baseline did."
    )
    text = f"""# {" vs ".join(results["apps"])} — compare report

{title(results)}. From `{settings["file"]}`. Run {results["started_at"][:19]} → \
{results["finished_at"][:19]} UTC ({results["elapsed_s"]:.0f}s).

{chr(10).join(f"- {line}" for line in summary_lines(results))}

**{flags_line(results)}**

{markdown_table(header, rows)}

{protocol_paragraph(results)}

{chr(10).join(load_generator_lines(results))}

## Arms

{markdown_table(["arm", "label", "how it ran", "health"], arms_rows(results))}

## Scenarios

{markdown_table(SCENARIO_HEADER, scenario_rows(results))}

## Answers that differ from the baseline's

{differences_text}

## Flags

{chr(10).join(f"- {flag}" for flag in results["flags"] or ["none"])}

## Host

{host["cpu_model"]}, {host["cores"]} cores ({host["cores_available"]} available), \
{host["memory_gib"]} GiB, {host["os"]}, {interpreter_text(host)}; pinning: \
{settings["pinning"]["note"]}.
"""
    path = run_dir / "report.md"
    write_text_safely(path, text)
    return path


def write_html_report(run_dir: Path, results: dict[str, Any]) -> Path:
    ratio_svg = charts.ratio_chart(results) if comparisons(results) else None
    differences = difference_lines(results)
    extra = (
        f"<h2>The file</h2><p>{escape(results['settings']['file'])}</p>"
        + "<h2>Arms</h2>"
        + html_table(["arm", "label", "how it ran", "health"], arms_rows(results))
        + "<h2>Scenarios</h2>"
        + html_table(SCENARIO_HEADER, scenario_rows(results))
        + "<h2>Answers that differ from the baseline's</h2>"
        + (
            "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in differences) + "</ul>"
            if differences
            else "<p>None, after normalising.</p>"
        )
    )
    path = run_dir / "report.html"
    write_text_safely(path, run_page(results, ratio_svg, extra))
    if ratio_svg is not None:
        write_text_safely(run_dir / "ratios.svg", ratio_svg)
    return path


def protocol_paragraph(results: dict[str, Any]) -> str:
    """How the arms were loaded and the ratios formed; a run without a fitted timetable or
    intervals over repeats reads as it always did (its report rebuilt the same)."""
    settings = results["settings"]
    fitted = results.get("timetable") or {}
    methods = {
        figures.get("method")
        for per_arm in results["ratios_vs_baseline"].values()
        for figures in per_arm.values()
    }
    if not fitted and CLUSTER_METHOD not in methods:
        return f"""Every arm was loaded in turn, in the benchmark's paired protocol: per scenario \
one locust run
alternated the load between the arms in {settings["window_s"]:g}s windows (the first \
{settings["settle_s"]:g}s of each not counted), {settings["pairs"]} rounds per repeat in \
rotating order. A ratio is the median of the per-round ratios of neighbouring windows, with its
exact 95% confidence interval. CPU per request and memory are of the process tree the harness
started (none for an arm it only reached); start-up is launch to the first 200 on the arm's
health path. A ⚠ marks a flagged cell."""
    windows = (
        fitted_windows_text(results)
        or f"{settings['window_s']:g}s windows (the first {settings['settle_s']:g}s of each "
        f"not counted) with {settings['users']} users"
    )
    interval = (
        "each repeat's median is one value, and the 95% interval is Student's t over the "
        "repeats (it covers what a rerun changes)"
        if CLUSTER_METHOD in methods
        else "the ratio is their median, with its exact 95% confidence interval"
    )
    return (
        "Every arm was loaded in turn, in the benchmark's paired protocol: per scenario one "
        f"locust run alternated the load between the arms in {windows}, {settings['pairs']} "
        "rounds per repeat in rotating order. A ratio is formed per round from neighbouring "
        f"windows; {interval}. CPU per request and memory are of the process tree the harness "
        "started (none for an arm it only reached); start-up is launch to the first 200 on the "
        "arm's health path. A ⚠ marks a flagged cell."
    )
