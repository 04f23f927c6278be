"""The sweep's report: in the terminal, report.md and report.html (the gain against the bytes
of an answer or a body, and app CPU per post), and sweep.svg, from results.json alone."""

from html import escape
from pathlib import Path
from typing import Any

from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, ScalarFormatter
from rich.console import Console

from loadtest.output.charts import (
    REFERENCE_COLOUR,
    Axes,
    Figure,
    colour,
    legend_outside,
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
)

TITLE = "How the gain scales with the payload"
NOTE = (
    "Each arm's figures: the median over its windows (r/s, app CPU per request and per post) "
    "and over all its requests (p50/p99). Ratios: the arm over the reference in the same round "
    "and cell, median of the rounds with its 95% CI; by r/s (above 1: faster) and by app CPU "
    "per request (the reference's over the arm's). A cell's gain is the r/s ratio, or the CPU "
    "ratio where the load generator (or PostgreSQL) held an arm back (marked *). Bytes: the "
    "first arm's answer (v1 by default; reads) or the body sent (writes)."
)
SHAPE_MARKERS = {"flat": "o", "nested": "s", "bulk": "^", "validate": "D"}
BODY_SHAPES = ("bulk", "validate")  # their bytes are the body's, not the answer's
# Published points, drawn as references: their machines, their versions.
JIRISPILKA = (  # response bytes, low, high: FastAPI 0.100, in-process TestClient, one run
    (1_000, 1.0, 1.0),
    (10_000, 3.0, 3.0),
    (100_000, 10.0, 13.0),
    (1_000_000, 10.0, 21.0),
)
SEED_004 = (20_000, 6.97)  # READ synthetic: 100 short posts (about 20 KB), ab -c 10, 2023


def cell_bytes(cell: dict[str, Any]) -> int:
    return int(
        cell["response_bytes"] if cell["shape"] in ("flat", "nested") else cell["request_bytes"]
    )


def gain_text(gain: dict[str, Any]) -> str:
    return format_ratio(gain, mark=False) + (" *" if gain["by"] == "cpu" else "")


def summary_lines(results: dict[str, Any]) -> list[str]:
    """Per read shape, the first comparison's gain at the smallest and the largest size and
    where it crosses 1.5x and 3x; per write shape, its gain at the largest size."""
    if not results["comparisons"]:
        return []
    name = results["comparisons"][0]
    lines = []
    for shape in results["shapes"]:
        cells = [cell for cell in results["cells"] if cell["shape"] == shape]
        if not cells:
            continue
        first, last = cells[0], cells[-1]
        text = (
            f"{shape}: {name} {gain_text(first['gains'][name])} at {first['size']:,} "
            f"({bytes_label(cell_bytes(first))})"
        )
        if last is not first:
            text += (
                f", {gain_text(last['gains'][name])} at {last['size']:,} "
                f"({bytes_label(cell_bytes(last))})"
            )
        crossing = results["crossings"].get(name, {}).get(shape)
        if crossing:
            parts = []
            for threshold, found in crossing.items():
                if found["estimate"] is not None:
                    span = (
                        f" [{bytes_label(found['ci95_high'])}–{bytes_label(found['ci95_low'])}]"
                        if found["ci95_high"] and found["ci95_low"]
                        else ""
                    )
                    parts.append(f"{threshold} from about {bytes_label(found['estimate'])}{span}")
            if parts:
                text += "; crosses " + ", ".join(parts)
        lines.append(text + ".")
    return lines


def heading(results: dict[str, Any]) -> str:
    settings = results["settings"]
    return (
        f"{TITLE}: {', '.join(settings['apps'])} — {len(results['cells'])} cells, "
        f"{settings['rounds']} rounds, on {results['host']['cpu_model']}"
    )


def figure_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    apps = results["settings"]["apps"]
    header = ["cell", "bytes", "users", *(f"{app} r/s" for app in apps)]
    header += [f"{app} CPU µs/post" for app in apps]
    header += [f"{app} p50/p99 ms" for app in apps]
    rows = []
    for cell in results["cells"]:
        arms = cell["arms"]
        row = [
            cell["name"],
            bytes_label(cell_bytes(cell)),
            "/".join(str(cell["users"][app]) for app in apps),
        ]
        row += [
            format_number(arms[app]["rps"], 1) + (" *" if arms[app]["load_bound"] else "")
            for app in apps
        ]
        row += [format_number(arms[app]["app_cpu_us_per_post"], 1) for app in apps]
        row += [
            f"{format_number(arms[app]['p50_ms'], 0)}/{format_number(arms[app]['p99_ms'], 0)}"
            for app in apps
        ]
        rows.append(row)
    return header, rows


def ratio_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    names = results["comparisons"]
    header = ["cell", *(f"{name} gain" for name in names)]
    header += [f"{name} by r/s" for name in names] + [f"{name} by CPU" for name in names]
    rows = []
    for cell in results["cells"]:
        row = [cell["name"]]
        row += [gain_text(cell["gains"][name]) for name in names]
        row += [format_ratio(cell["ratios"][name]["rps"], mark=False) for name in names]
        row += [format_ratio(cell["ratios"][name]["cpu"], mark=False) for name in names]
        rows.append(row)
    return header, rows


def versions_line(results: dict[str, Any]) -> str:
    parts = []
    for app, versions in results["versions"].items():
        parts.append(
            f"{app}: Pydantic {versions.get('pydantic', '?')}, "
            f"FastAPI {versions.get('fastapi', '?')}"
        )
    return (
        "; ".join(parts)
        + f". Nested posts carry {results['settings']['comments_per_post']} comments each."
    )


def print_report(results: dict[str, Any], console: Console) -> None:
    for line in summary_lines(results):
        console.print(line, highlight=False)
    print_table(
        console,
        *figure_rows(results),
        title=heading(results),
        caption="*: the arm was held back (by the load generator or PostgreSQL); its r/s is "
        "not the app's capacity.",
    )
    if results["comparisons"]:
        print_table(
            console,
            *ratio_rows(results),
            title="Ratios, paired by round [95% CI]",
            caption="*: the gain is read from app CPU per request, an arm being held back.",
        )
    console.print(versions_line(results), highlight=False)
    print_flags(console, results["flags"])


def markdown(results: dict[str, Any]) -> str:
    parts = [f"# {heading(results)}", "", *summary_lines(results), "", versions_line(results), ""]
    parts += ["## Figures", "", markdown_table(*figure_rows(results)), ""]
    if results["comparisons"]:
        parts += ["## Ratios", "", markdown_table(*ratio_rows(results)), ""]
    if results["flags"]:
        parts += ["## Flags", "", *(f"- {flag}" for flag in results["flags"]), ""]
    parts += [NOTE, ""]
    return "\n".join(parts)


def log_bytes_axis(ax: Axes) -> None:
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _position: bytes_label(value)))
    ax.xaxis.set_minor_formatter(NullFormatter())


def draw_gains(ax: Axes, results: dict[str, Any], shape: str) -> None:
    """One shape: each comparison over the baseline, the gain against the bytes with its 95%
    interval; hollow markers where it is read from CPU; in the flat panel, the published points
    in grey."""
    # Over the baseline (v1) where it ran; else whatever comparisons the run made.
    over_baseline = [name for name in results["comparisons"] if name.endswith("/v1")]
    cells = [cell for cell in results["cells"] if cell["shape"] == shape]
    marker = SHAPE_MARKERS.get(shape, "o")
    for name in over_baseline or results["comparisons"]:
        arm = name.split("/")[0]
        points = [
            (cell_bytes(cell), cell["gains"][name])
            for cell in cells
            if cell["gains"][name]["estimate"] is not None
        ]
        if not points:
            continue
        estimates = [gain["estimate"] for _, gain in points]
        below = [
            estimate - (gain["ci95_low"] or estimate)
            for (_, gain), estimate in zip(points, estimates, strict=True)
        ]
        above = [
            (gain["ci95_high"] or estimate) - estimate
            for (_, gain), estimate in zip(points, estimates, strict=True)
        ]
        ax.errorbar(
            [x for x, _ in points],
            estimates,
            yerr=[below, above],
            color=colour(arm),
            marker=marker,
            markersize=6,
            linewidth=1.4,
            capsize=3,
            label=name,
        )
        for (x, gain), estimate in zip(points, estimates, strict=True):
            if gain["by"] == "cpu":  # hollow: read from app CPU
                hollow(ax, x, estimate, marker, colour(arm))
    if shape == "flat":
        draw_published(ax)
    ax.axhline(1.0, color=REFERENCE_COLOUR, linewidth=0.8)
    log_bytes_axis(ax)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 1.5, 2.0, 3.0, 5.0)))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_title(shape)
    ax.set_xlabel("bytes of the body" if shape in BODY_SHAPES else "bytes of the answer")
    ax.grid(color=REFERENCE_COLOUR, linewidth=0.4)


def hollow(ax: Axes, x: float, y: float, marker: str, tint: str) -> None:
    """A hollow marker over the error bar's own, filled one: a gain read from app CPU."""
    ax.plot(x, y, marker=marker, markersize=6, color=tint, markerfacecolor="white", zorder=3)


def draw_published(ax: Axes) -> None:
    """The published points, in grey: jirispilka's benchmark and the FastAPI 0.100 article."""
    for x, low, high in JIRISPILKA:
        ax.plot([x, x], [low, high], color=REFERENCE_COLOUR, linewidth=3)
        ax.plot(x, (low + high) / 2, marker="x", color="#888888")
    ax.plot(
        [],
        [],
        marker="x",
        color="#888888",
        linestyle="none",
        label="jirispilka/fastapi-pydantic-v2-benchmark:\nTestClient, FastAPI 0.100 "
        "(their machine)",
    )
    ax.plot(
        *SEED_004,
        marker="*",
        markersize=10,
        color="#888888",
        linestyle="none",
        label="the FastAPI 0.100-beta article: READ\nsynthetic, 100 posts, ab -c 10 "
        "(their machine)",
    )


def draw_cpu_per_post(ax: Axes, results: dict[str, Any], shape: str) -> None:
    """One shape: app CPU per post against the number of posts, one line per arm."""
    cells = [cell for cell in results["cells"] if cell["shape"] == shape]
    for app in results["settings"]["apps"]:
        points = [
            (cell["size"], cell["arms"][app]["app_cpu_us_per_post"])
            for cell in cells
            if cell["arms"][app]["app_cpu_us_per_post"]
        ]
        if not points:
            continue
        ax.plot(
            [size for size, _ in points],
            [value for _, value in points],
            marker=SHAPE_MARKERS.get(shape, "o"),
            markersize=5,
            color=colour(app),
            label=app,
        )
    log_scale(ax, x=True, y=True)
    ax.set_xlabel("posts")
    ax.grid(color=REFERENCE_COLOUR, linewidth=0.4)


def gain_figure(results: dict[str, Any]) -> Figure:
    """Small multiples: a column per shape, the gain over v1 on top (against bytes), app CPU
    per post below (against posts); one legend per row, to the right."""
    shapes = list(results["shapes"])
    fig, axes = plt.subplots(
        2,
        len(shapes),
        figsize=(3.3 * len(shapes) + 3.6, 6.8),
        squeeze=False,
        sharey="row",
        layout="constrained",
    )
    for column, shape in enumerate(shapes):
        draw_gains(axes[0][column], results, shape)
        draw_cpu_per_post(axes[1][column], results, shape)
    axes[0][0].set_ylabel("gain over v1 (x), 95% CI")
    axes[1][0].set_ylabel("app CPU per post, µs")
    for row in axes:
        handles: dict[str, Any] = {}
        for ax in row:
            for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
                handles.setdefault(label, handle)
        labels = sorted(handles, key=lambda label: label not in results["comparisons"])
        if labels:  # the comparisons first, then the published points
            legend_outside(row[-1], handles=[handles[label] for label in labels], labels=labels)
    return fig


def html(results: dict[str, Any]) -> str:
    body = "".join(f'<p class="summary">{escape(line)}</p>' for line in summary_lines(results))
    body += f'<p class="note">{escape(versions_line(results))}</p>'
    body += figure(
        to_svg(gain_figure(results)),
        "A column per shape. Top: the gain over v1 (or the run's comparisons, without v1) "
        "against the bytes of the answer (reads) or the body (writes), with its 95% CI; hollow "
        "markers: read from app CPU (an arm was not saturated: the load generator or "
        "PostgreSQL held it back); grey, in the flat panel: published points, their machines "
        "and versions. Bottom: app CPU per post against the posts.",
    )
    body += "<h2>Figures</h2>" + html_table(*figure_rows(results))
    if results["comparisons"]:
        body += "<h2>Ratios</h2>" + html_table(*ratio_rows(results))
    body += flags_section(results["flags"], NOTE)
    return page(heading(results), body)


def write_reports(run_dir: Path, results: dict[str, Any]) -> list[Path]:
    charts = {"sweep.svg": to_svg(gain_figure(results))}
    return write_reports_into(run_dir, markdown(results), html(results), charts)
