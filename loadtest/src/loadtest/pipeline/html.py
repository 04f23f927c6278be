"""The benchmark's report.html (loadtest/output/html.py: a self-contained page) from
results.json alone; and a page comparing two runs."""

from html import escape
from pathlib import Path
from typing import Any

from loadtest.lab.files import write_text_safely
from loadtest.lab.host import interpreter_text
from loadtest.output.html import figure, html_table, page
from loadtest.pipeline import charts
from loadtest.pipeline.tables import (
    VERSION_LIBRARIES,
    comparison_rows,
    comparisons,
    flags_line,
    interval_limit_text,
    load_generator_lines,
    memory_measure,
    ratio_caption,
    summary_lines,
    table_rows,
    timetable_rows,
    title,
)


def ratio_figure(ratio_svg: str | None, published: bool = True) -> str:
    """The main chart; `published`: beside the published study's ratios (the lab's own
    scenarios, not a compare file's)."""
    caption = (
        "Each ratio is an arm's r/s over another arm's in the same round (hatched: not over the "
        "baseline), the median of the paired ratios with its exact 95% CI"
    )
    if published:
        caption += (
            "; grey: the v2/v1 ratios the FastAPI 0.100-beta article published (FastAPI 0.98 + "
            "Pydantic 1 against 0.100-beta + Pydantic 2, a CRUD app, ab -c 10, on its own "
            "machine)"
        )
    return figure(ratio_svg, caption + ".")


def memory_caption(results: dict[str, Any]) -> str:
    if results["settings"].get("docker"):
        return f"The app's {memory_measure(results)}, median over repeats."
    return "RSS of the app's process tree, median over repeats."


def startup_section(svg: str | None, lab_apps: bool = True) -> str:
    if svg is None:
        return ""
    caption = "Fresh starts, one arm at a time in rotating order: launch to the first 200 on "
    caption += "/health, and the app module's import inside it." if lab_apps else "its health path."
    return "<h2>Start-up</h2>" + figure(svg, caption)


def cpu_caption(results: dict[str, Any]) -> str:
    if results.get("kind", "benchmark") != "benchmark":
        return (
            "The process tree the harness started for each arm (none for an arm it only "
            "reached), and the lab's PostgreSQL on top where the file asked for it."
        )
    return (
        "The app's process tree, and the embedded PostgreSQL's on top (none in READ "
        "synthetic; not read for an external server)."
    )


def settings_rows(results: dict[str, Any]) -> list[list[str]]:
    settings = results["settings"]
    order = " / ".join(" ".join(arms) for arms in settings["arm_order"])
    return [
        *timetable_rows(results),
        ["pairs (rounds) per scenario and repeat", str(settings["pairs"])],
        ["warm-up", f"{settings['warmup_s']:g} s per arm before each scenario, discarded"],
        ["repeats", f"{settings['repeats']} (fresh processes), arm order {order}"],
        ["start-up samples per arm", str(settings.get("startup_samples", "–"))],
        ["dataset", f"{settings['dataset_size']:,} posts" if settings["dataset_size"] else "none"],
        *(
            [["uvicorn workers", str(settings["workers"])]]
            if results.get("kind", "benchmark") == "benchmark"
            else []
        ),
        ["locust processes", str(settings["load_processes"])],
        ["pinning", settings["pinning"]["note"]],
        ["database", database_text(settings["database"])],
    ]


def database_text(database: dict[str, Any] | None) -> str:
    if database is None:
        return "none of the lab's (the services keep their own)"
    return f"PostgreSQL {database['server_version']} ({database['kind']})"


def run_page(results: dict[str, Any], ratio_svg: str | None, extra_sections: str = "") -> str:
    """The page; `ratio_svg` is the main chart, None when the run has no ratio;
    `extra_sections` (HTML) go before the settings."""
    kind = results.get("kind", "benchmark")
    arms = list(results["apps"])
    header, rows = table_rows(results)
    host = results["host"]
    summary = "".join(f"<li>{escape(line)}</li>" for line in summary_lines(results))
    body = f"""
<p>{escape(title(results))}. Run {escape(results["started_at"][:19])} →
{escape(results["finished_at"][:19])} UTC ({results["elapsed_s"]:.0f} s).</p>
<ul class="summary">{summary}</ul>
<p class="verdict">{escape(flags_line(results))}</p>
{ratio_figure(ratio_svg, published=kind == "benchmark")}
<h2>Summary</h2>
{html_table(header, rows)}
<p class="note">r/s: median of windows (min–max). {
        escape(ratio_caption(results))
    } CPU: the app's milliseconds per request (PostgreSQL's after it in parentheses,
where it was measured). ⚠: see the flags.</p>
<p>{"<br>".join(escape(line) for line in load_generator_lines(results))}</p>
<h2>Flags</h2>
{flag_list(results)}
<h2>Throughput</h2>
{
        figure(
            charts.rps_chart(results),
            "Median over each arm's windows, with the 95% CI of the median.",
        )
    }
<h2>Latency</h2>
{figure(charts.latency_chart(results), "p50, p95 and p99 over every counted request.")}
<h2>CPU per request</h2>
{figure(charts.cpu_chart(results), cpu_caption(results))}
<h2>Memory</h2>
{figure(charts.memory_chart(results), memory_caption(results))}
{startup_section(charts.startup_chart(results), lab_apps=kind == "benchmark")}
{extra_sections}
<h2>Settings</h2>
{html_table(["setting", "value"], settings_rows(results))}
{versions_section(results)}
<h2>Host</h2>
<p>{escape(host["cpu_model"])}, {escape(str(host["cores"]))} cores
({escape(str(host["cores_available"]))} available), {escape(str(host["memory_gib"]))} GiB,
{escape(host["os"])}, {escape(interpreter_text(host))}.</p>
"""
    return page(f"{' vs '.join(arms)} — {kind} report", body)


def flag_list(results: dict[str, Any]) -> str:
    flags = results["flags"]
    if flags:
        return (
            '<ul class="flags">' + "".join(f"<li>{escape(flag)}</li>" for flag in flags) + "</ul>"
        )
    return (
        "<p>None: no failures, no verification problems, every CI within "
        f"{interval_limit_text(results)}, every synthetic window saturated.</p>"
    )


def versions_section(results: dict[str, Any]) -> str:
    """The arms' library versions, where they reported any: a compare file's services need not
    report the lab's versions on their health path."""
    arms = list(results["apps"])
    versions = [
        [library, *(str(results["apps"][arm]["versions"].get(library, "–")) for arm in arms)]
        for library in VERSION_LIBRARIES
    ]
    if not any(any(cell != "–" for cell in row[1:]) for row in versions):
        return ""
    return "<h2>Versions</h2>" + html_table(["library", *arms], versions)


def write_html_report(run_dir: Path, results: dict[str, Any]) -> Path:
    """report.html, and the main chart alone as ratios.svg (for a README or a slide)."""
    # Drawn once: a single-arm run has no ratio, so no main chart.
    ratio_svg = charts.ratio_chart(results) if comparisons(results) else None
    path = run_dir / "report.html"
    write_text_safely(path, run_page(results, ratio_svg))
    if ratio_svg is not None:
        write_text_safely(run_dir / "ratios.svg", ratio_svg)
    return path


def comparison_page(runs: list[tuple[str, dict[str, Any]]]) -> str:
    header, rows = comparison_rows(runs)
    parts = [
        f"<p>{escape(name)}: {escape(title(results))}, run {escape(results['started_at'][:19])} "
        f"UTC on {escape(results['host']['cpu_model'])}.</p>"
        for name, results in runs
    ]
    body = f"""
{"".join(parts)}
{
        figure(
            charts.run_comparison_chart(runs),
            "Each run's paired ratios with their 95% CI (lighter: "
            "the second run; hatched: a comparison not over v1). Intervals describe each run; "
            "between runs the machine itself may have changed, so compare runs from the same "
            "machine type.",
        )
    }
{html_table(header, rows)}
{
        "".join(
            f"<h2>Flags of {escape(name)}</h2>"
            + (
                '<ul class="flags">'
                + "".join(f"<li>{escape(flag)}</li>" for flag in results["flags"])
                + "</ul>"
                if results["flags"]
                else "<p>none</p>"
            )
            for name, results in runs
        )
    }
<p class="note">⚠ in the table: that ratio is flagged in its run (its flags above).</p>
"""
    return page(f"{runs[0][0]} vs {runs[1][0]} — two benchmark runs", body)
