"""The shapes mode's report: in the terminal, report.md and report.html (each cell's gain over
v1 with its 95% CI), from results.json alone. Where Pydantic 2 is slower comes first."""

from html import escape
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.output.charts import (
    LEGEND_FONTSIZE,
    REFERENCE_COLOUR,
    Axes,
    Figure,
    colour,
    log_scale,
    plt,
    to_svg,
)
from loadtest.output.html import figure, flags_section, html_table, page
from loadtest.output.run_folder import write_reports_into
from loadtest.output.text import (
    bytes_label,
    format_number,
    format_ratio,
    markdown_table,
    print_flags,
    print_table,
    versions_sentence,
)

TITLE = "Shapes on the request path"
NOTE = (
    "Each arm's figures: the median over its windows (r/s, app CPU per request) and over all "
    "its requests (p50/p99). A gain is the arm's r/s over the reference's in the same round and "
    "cell, median of the rounds with its 95% CI (above 1: faster), or its CPU per request "
    "ratio where an arm was not saturated (marked *). Within an arm, a cell over its "
    "neighbour (discriminated over plain; a reused adapter over parse_obj_as) is paired by "
    "round too. Bytes: the first arm's answer (reads) or the body sent."
)


def cell_bytes(cell: dict[str, Any]) -> int:
    return int(cell["response_bytes"] if cell["read"] else cell["request_bytes"])


def gain_text(gain: dict[str, Any]) -> str:
    return format_ratio(gain, mark=False) + (" *" if gain["by"] == "cpu" else "")


def losses(results: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(comparison, cell, gain) where the arm is slower than its reference: the interval lies
    below 1. Worst first."""
    found = []
    for name in results["comparisons"]:
        for cell in results["cells"]:
            gain = cell["gains"][name]
            if gain["ci95_high"] is not None and gain["ci95_high"] < 1:
                found.append((name, cell, gain))
    return sorted(found, key=lambda item: item[2]["estimate"])


def summary_lines(results: dict[str, Any]) -> list[str]:
    lines = []
    lost = losses(results)
    if lost:
        lines.append(
            "Slower than the reference (the whole interval below 1): "
            + "; ".join(f"{name} {cell['name']} {gain_text(gain)}" for name, cell, gain in lost)
            + "."
        )
    else:
        examined = len(results["cells"]) * len(results["comparisons"])
        lines.append(f"No arm slower than its reference in any of {examined} cell comparisons.")
    for within in results["within_arms"]:
        parts = [
            f"{arm} {format_ratio(ratio, mark=False)}" for arm, ratio in within["ratios"].items()
        ]
        lines.append(
            f"{within['cell']} over {within['over']} ({within['what']}): {', '.join(parts)}."
        )
    return lines


def cell_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    apps = results["settings"]["apps"]
    header = ["cell", "bytes", *(f"{app} r/s" for app in apps), *results["comparisons"]]
    rows = []
    for cell in results["cells"]:
        rows.append(
            [
                cell["name"],
                bytes_label(cell_bytes(cell)),
                *(format_number(cell["arms"][app]["rps"], 0) for app in apps),
                *(gain_text(cell["gains"][name]) for name in results["comparisons"]),
            ]
        )
    return header, rows


def cpu_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    apps = results["settings"]["apps"]
    header = ["cell", *(f"{app} µs CPU/req" for app in apps), *(f"{app} p99 ms" for app in apps)]
    rows = [
        [
            cell["name"],
            *(format_number(cell["arms"][app]["app_cpu_us_per_request"], 0) for app in apps),
            *(format_number(cell["arms"][app]["p99_ms"], 0) for app in apps),
        ]
        for cell in results["cells"]
    ]
    return header, rows


def within_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    apps = results["settings"]["apps"]
    header = ["cell", "over", *apps]
    rows = [
        [
            within["cell"],
            within["over"],
            *(format_ratio(within["ratios"][app], mark=False) for app in apps),
        ]
        for within in results["within_arms"]
    ]
    return header, rows


def heading(results: dict[str, Any]) -> str:
    host = results["host"]
    return (
        f"{TITLE}: {', '.join(results['settings']['apps'])} — {len(results['cells'])} cells, "
        f"{results['settings']['rounds']} rounds, on {host['cpu_model']}"
    )


def versions_line(results: dict[str, Any]) -> str:
    return versions_sentence(results["versions"])


def print_report(results: dict[str, Any], console: Console) -> None:
    for line in summary_lines(results):
        console.print(line, highlight=False)
    print_table(console, *cell_rows(results), title=heading(results))
    print_table(console, *cpu_rows(results), title="App CPU per request and p99")
    if results["within_arms"]:
        print_table(console, *within_rows(results), title="Within each arm, paired by round")
    console.print("*: read from app CPU per request (an arm was not saturated).", highlight=False)
    console.print(versions_line(results), highlight=False)
    print_flags(console, results["flags"])


def markdown(results: dict[str, Any]) -> str:
    parts = [f"# {heading(results)}", "", *summary_lines(results), "", versions_line(results), ""]
    parts += ["## Cells", "", markdown_table(*cell_rows(results)), ""]
    parts += ["## App CPU and latency", "", markdown_table(*cpu_rows(results)), ""]
    if results["within_arms"]:
        parts += ["## Within each arm", "", markdown_table(*within_rows(results)), ""]
    parts += ["## What each cell does", ""]
    parts += [f"- `{kind}`: {what}" for kind, what in results["kinds"].items()]
    if results["flags"]:
        parts += ["", "## Flags", "", *(f"- {flag}" for flag in results["flags"])]
    parts += ["", NOTE, ""]
    return "\n".join(parts)


def draw_gains(ax: Axes, results: dict[str, Any]) -> None:
    """Each cell's gain per comparison, a bar per comparison with its 95% CI; 1: as fast."""
    cells = results["cells"]
    names = results["comparisons"]
    height = 0.8 / max(len(names), 1)
    for place, name in enumerate(names):
        arm = name.split("/")[0]
        positions: list[float] = []
        estimates: list[float] = []
        errors: list[list[float]] = [[], []]
        for row, cell in enumerate(cells):
            gain = cell["gains"][name]
            if gain["estimate"] is None:
                continue
            positions.append(row + place * height)
            estimates.append(gain["estimate"])
            low, high = gain["ci95_low"], gain["ci95_high"]
            errors[0].append(gain["estimate"] - low if low is not None else 0)
            errors[1].append(high - gain["estimate"] if high is not None else 0)
        ax.barh(
            positions,
            estimates,
            height=height,
            xerr=errors,
            color=colour(arm),
            alpha=1.0 if name.endswith("/v1") else 0.55,
            hatch=None if name.endswith("/v1") else "//",
            label=name,
            capsize=2,
        )
    ax.axvline(1.0, color="#444444", linewidth=0.9)
    log_scale(ax, x=True)
    ax.set_yticks(
        [row + height * (len(names) - 1) / 2 for row in range(len(cells))],
        [cell["name"] for cell in cells],
        fontsize=8,
    )
    ax.invert_yaxis()
    ax.set_xlabel("gain over the reference (x), 95% CI; left of the line: slower")
    ax.grid(axis="x", color=REFERENCE_COLOUR, linewidth=0.4)
    ax.legend(fontsize=LEGEND_FONTSIZE, loc="lower right")


def gain_figure(results: dict[str, Any]) -> Figure:
    fig, ax = plt.subplots(figsize=(9, 0.42 * len(results["cells"]) + 1.4))
    draw_gains(ax, results)
    fig.tight_layout()
    return fig


def html(results: dict[str, Any]) -> str:
    body = "".join(f'<p class="summary">{escape(line)}</p>' for line in summary_lines(results))
    body += f'<p class="note">{escape(versions_line(results))}</p>'
    body += figure(
        to_svg(gain_figure(results)),
        "Each cell's gain over its reference (v1, and v2-latest over v2 hatched), with its 95% "
        "CI; left of the line, the arm is slower.",
    )
    body += "<h2>Cells</h2>" + html_table(*cell_rows(results))
    body += "<h2>App CPU and latency</h2>" + html_table(*cpu_rows(results))
    if results["within_arms"]:
        body += "<h2>Within each arm</h2>" + html_table(*within_rows(results))
    body += (
        "<h2>What each cell does</h2><ul>"
        + "".join(
            f"<li><code>{escape(kind)}</code>: {escape(what)}</li>"
            for kind, what in results["kinds"].items()
        )
        + "</ul>"
    )
    body += flags_section(results["flags"], NOTE)
    return page(heading(results), body)


def write_reports(run_dir: Path, results: dict[str, Any]) -> list[Path]:
    charts = {"shapes.svg": to_svg(gain_figure(results))}
    return write_reports_into(run_dir, markdown(results), html(results), charts)
