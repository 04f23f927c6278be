"""report.html: one self-contained page (inline SVG charts, inline CSS, no script, no network)
from results.json alone; and a page comparing two runs."""

from html import escape
from pathlib import Path
from typing import Any

from loadtest import charts
from loadtest.report import (
    VERSION_LIBRARIES,
    format_ratio_with_ci,
    format_spread,
    load_generator_lines,
    table_rows,
    title,
)
from loadtest.scenarios import SCENARIOS

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 75rem; color: #222;
       padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f2f2f2; }
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; }
.flags li { color: #8a4b00; } .note { color: #555; font-size: 0.9rem; }
"""


def html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(cell)}</th>" for cell in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure(svg: str | None, caption: str) -> str:
    if svg is None:
        return ""
    caption_html = f'<figcaption class="note">{escape(caption)}</figcaption>'
    return f'<figure class="chart">{svg}{caption_html}</figure>'


def page(heading: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(heading)}</title><style>{STYLE}</style></head>"
        f"<body><h1>{escape(heading)}</h1>{body}</body></html>\n"
    )


def ratio_figure(ratio_svg: str | None) -> str:
    return figure(
        ratio_svg,
        "Each ratio is an arm's r/s over another arm's in the same round (hatched: not over the "
        "baseline), the median of the paired ratios with its exact 95% CI; grey: the reference "
        "experiment's published v2/v1 ratios (it also changed FastAPI, on its own machine).",
    )


def startup_section(svg: str | None) -> str:
    if svg is None:
        return ""
    return "<h2>Start-up</h2>" + figure(
        svg,
        "Fresh starts, one arm at a time in rotating order: launch to the first 200 on /health, "
        "and the app module's import inside it.",
    )


def settings_rows(results: dict[str, Any]) -> list[list[str]]:
    settings = results["settings"]
    order = " / ".join(" ".join(arms) for arms in settings["arm_order"])
    return [
        ["users", str(settings["users"])],
        ["windows", f"{settings['window_s']:g} s, the first {settings['settle_s']:g} s not "
                    "counted"],
        ["pairs (rounds) per scenario and repeat", str(settings["pairs"])],
        ["warm-up", f"{settings['warmup_s']:g} s per arm before each scenario, discarded"],
        ["repeats", f"{settings['repeats']} (fresh processes), arm order {order}"],
        ["start-up samples per arm", str(settings.get("startup_samples", "–"))],
        ["dataset", f"{settings['dataset_size']:,} posts"],
        ["uvicorn workers", str(settings["workers"])],
        ["locust processes", str(settings["load_processes"])],
        ["pinning", settings["pinning"]["note"]],
        ["database", f"PostgreSQL {settings['database']['server_version']} "
                     f"({settings['database']['kind']})"],
    ]  # fmt: skip


def run_page(results: dict[str, Any], ratio_svg: str | None) -> str:
    """The page; `ratio_svg` is the main chart, None when the run has no ratio."""
    arms = list(results["apps"])
    header, rows = table_rows(results)
    versions = [
        [library, *(str(results["apps"][arm]["versions"].get(library, "–")) for arm in arms)]
        for library in VERSION_LIBRARIES
    ]
    host = results["host"]
    flags = results["flags"]
    flag_list = (
        '<ul class="flags">' + "".join(f"<li>{escape(flag)}</li>" for flag in flags) + "</ul>"
        if flags
        else "<p>None: no failures, no verification problems, every CI within ±5%, every "
        "synthetic window saturated.</p>"
    )
    body = f"""
<p>{escape(title(results))}. Run {escape(results["started_at"][:19])} →
{escape(results["finished_at"][:19])} UTC ({results["elapsed_s"]:.0f} s).</p>
{ratio_figure(ratio_svg)}
<h2>Summary</h2>
{html_table(header, rows)}
<p class="note">r/s: median of windows (min–max). Ratio: median of paired window ratios, 95% CI
in brackets. ⚠: see the flags.</p>
<p>{"<br>".join(escape(line) for line in load_generator_lines(results))}</p>
<h2>Flags</h2>
{flag_list}
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
{
        figure(
            charts.cpu_chart(results),
            "The app's process tree, and the embedded PostgreSQL's on "
            "top (none in READ synthetic; not read for an external server).",
        )
    }
<h2>Memory</h2>
{figure(charts.memory_chart(results), "RSS of the app's process tree, median over repeats.")}
{startup_section(charts.startup_chart(results))}
<h2>Settings</h2>
{html_table(["setting", "value"], settings_rows(results))}
<h2>Versions</h2>
{html_table(["library", *arms], versions)}
<h2>Host</h2>
<p>{escape(host["cpu_model"])}, {host["cores"]} cores ({host["cores_available"]} available),
{host["memory_gib"]} GiB, {escape(host["os"])}, Python {escape(host["python"])}.</p>
"""
    return page(f"{' vs '.join(arms)} — benchmark report", body)


def write_html_report(run_dir: Path, results: dict[str, Any]) -> Path:
    """report.html, and the main chart alone as ratios.svg (for a README or a slide)."""
    # Drawn once: a single-arm run has no ratio, so no main chart.
    ratio_svg = charts.ratio_chart(results) if charts.comparisons(results) else None
    path = run_dir / "report.html"
    path.write_text(run_page(results, ratio_svg))
    if ratio_svg is not None:
        (run_dir / "ratios.svg").write_text(ratio_svg)
    return path


def comparison_rows(runs: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[list[str]]]:
    """Per scenario and ratio, each run's ratio [CI]; start-up per arm too."""
    header = ["metric", *(name for name, _ in runs)]
    rows = []
    # Everything either run has: comparing an old two-arm run with a new three-arm one keeps
    # the new arm's rows (with "–" for the run that lacks them).
    scenarios = union(results["settings"]["scenarios"] for _, results in runs)
    ratios_by_run = [dict(charts.comparisons(results)) for _, results in runs]
    labels = union(ratios_by_run)
    arms = union(results["apps"] for _, results in runs)
    for name in scenarios:
        for label in labels:
            cells = []
            for (_, results), ratios in zip(runs, ratios_by_run, strict=True):
                figures_of = ratios.get(label)
                in_run = name in results["settings"]["scenarios"]
                cells.append(format_ratio_with_ci(figures_of(name)) if figures_of and in_run
                             else "–")  # fmt: skip
            rows.append([f"{SCENARIOS[name].label} {label} [95% CI]", *cells])
    for arm in arms:
        cells = [format_spread((results["apps"].get(arm) or {}).get("startup"), "to_health_s", 2)
                 for _, results in runs]  # fmt: skip
        rows.append([f"{arm} start-up to first /health, s", *cells])
    for arm in arms:
        cells = [str((results["apps"].get(arm) or {}).get("versions", {}).get("fastapi", "–"))
                 + " / " + str((results["apps"].get(arm) or {}).get("versions", {})
                               .get("pydantic", "–")) for _, results in runs]  # fmt: skip
        rows.append([f"{arm} FastAPI / Pydantic", *cells])
    return header, rows


def union(groups) -> list:  # noqa: ANN001 - any iterables of names
    """Every name in any group, in the order first seen."""
    return list(dict.fromkeys(name for group in groups for name in group))


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
            "the second run). Intervals describe each run; between runs the machine itself may "
            "have changed, so compare runs from the same machine type.",
        )
    }
{html_table(header, rows)}
"""
    return page(f"{runs[0][0]} vs {runs[1][0]} — two benchmark runs", body)
