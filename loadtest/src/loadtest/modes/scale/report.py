"""The scale mode's report: in the terminal, report.md and report.html (with start-up and memory
against the number of models), from results.json alone."""

from html import escape
from pathlib import Path
from typing import Any

from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter
from rich.console import Console

from loadtest.modes.scale.results import HEADLINE_METRICS
from loadtest.modes.scale.subjects import DEFER_SUFFIX, FLAT_SUFFIX
from loadtest.output.charts import (
    REFERENCE_COLOUR,
    Axes,
    Figure,
    colour,
    legend_outside,
    plt,
    to_svg,
)
from loadtest.output.html import figure, html_table, page
from loadtest.output.run_folder import write_reports_into
from loadtest.output.text import format_number, format_ratio, markdown_table, print_table

TITLE = "Start-up and memory at scale"
NOTE = (
    "Each figure: the median over fresh processes (min–max in brackets), one app at a time on "
    "the app CPUs. Ratios: the subject's figure over the reference's in the same round (above "
    "1: it costs more), median of the rounds with its 95% CI. Per model: the growth of the "
    "median from the smallest app to the biggest, divided by the models added (each model "
    "brings two routes)."
)


def metric_label(scale: dict[str, Any], metric: str) -> str:
    facts = scale["metrics"][metric]
    return f"{facts['label']}, {facts['unit']}"


def figure_cell(cell: dict[str, Any], digits: int) -> str:
    if cell["median"] is None:
        return "–"
    return (
        f"{format_number(cell['median'], digits)} "
        f"({format_number(cell['min'], digits)}–{format_number(cell['max'], digits)})"
    )


def figure_rows(scale: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    keys = list(scale["subjects"])
    header = ["metric", "models", *keys]
    rows = []
    for metric, facts in scale["metrics"].items():
        for models in scale["models"]:
            row = [metric_label(scale, metric) if models == scale["models"][0] else "", str(models)]
            row += [
                figure_cell(scale["figures"][key][str(models)][metric], facts["digits"])
                for key in keys
            ]
            rows.append(row)
    return header, rows


def ratio_rows(scale: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    names = list(scale["ratios"])
    header = ["metric", "models", *names]
    rows = []
    for metric in scale["metrics"]:
        for models in scale["models"]:
            row = [metric_label(scale, metric) if models == scale["models"][0] else "", str(models)]
            row += [
                format_ratio(scale["ratios"][name]["by_models"][str(models)][metric], mark=False)
                for name in names
            ]
            rows.append(row)
    return header, rows


def per_model_rows(scale: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    keys = list(scale["subjects"])
    header = ["per model added", *keys]
    rows = []
    for metric, facts in scale["metrics"].items():
        unit = "ms" if facts["unit"] == "s" else "KiB"
        row = [f"{facts['label']}, {unit}"]
        row += [format_number(scale["per_model"][key].get(metric), 1) for key in keys]
        rows.append(row)
    return header, rows


def summary_lines(scale: dict[str, Any]) -> list[str]:
    """Per ratio over v1 (or the first one there is), the headline metrics at the biggest app."""
    biggest = str(max(scale["models"]))
    lines = []
    for name, ratio in scale["ratios"].items():
        parts = [
            f"{scale['metrics'][metric]['label']} "
            f"{format_ratio(ratio['by_models'][biggest][metric], mark=False)}"
            for metric in HEADLINE_METRICS
        ]
        lines.append(f"{name} at {biggest} models: {'; '.join(parts)}.")
    costs = []
    for key, per_model in scale["per_model"].items():
        if "to_health_s" in per_model:
            costs.append(
                f"{key} {format_number(per_model['to_health_s'], 1)} ms and "
                f"{format_number(per_model['rss_routes_mib'], 0)} KiB"
            )
    if costs:
        lines.append(
            "Each model added (two routes) costs start-up and memory after every route once: "
            + ", ".join(costs)
            + "."
        )
    return lines


def heading(results: dict[str, Any]) -> str:
    scale = results["scale"]
    host = results["host"]
    return (
        f"{TITLE}: {', '.join(scale['subjects'])} — {', '.join(map(str, scale['models']))} "
        f"models, {results['settings']['processes']} fresh processes each, on {host['cpu_model']}"
    )


def versions_line(scale: dict[str, Any]) -> str:
    parts = []
    for key, facts in scale["subjects"].items():
        versions = facts["versions"]
        parts.append(
            f"{key}: Pydantic {versions.get('pydantic', '?')}"
            + (" (compiled)" if versions.get("pydantic_compiled") else "")
            + f", FastAPI {versions.get('fastapi', '?')}"
        )
    return "; ".join(parts) + "."


def print_report(results: dict[str, Any], console: Console) -> None:
    scale = results["scale"]
    for line in summary_lines(scale):
        console.print(line, highlight=False)
    print_table(console, *figure_rows(scale), title=heading(results))
    if scale["ratios"]:
        print_table(console, *ratio_rows(scale), title="Ratios, paired by round [95% CI]")
    if scale["per_model"] and any(scale["per_model"].values()):
        print_table(console, *per_model_rows(scale), title="What one more model costs")
    console.print(versions_line(scale), highlight=False)


def markdown(results: dict[str, Any]) -> str:
    scale = results["scale"]
    parts = [f"# {heading(results)}", "", *summary_lines(scale), "", versions_line(scale), ""]
    parts += ["## Figures", "", markdown_table(*figure_rows(scale)), ""]
    if scale["ratios"]:
        parts += ["## Ratios", "", markdown_table(*ratio_rows(scale)), ""]
    if any(scale["per_model"].values()):
        parts += ["## Per model", "", markdown_table(*per_model_rows(scale)), ""]
    parts += [NOTE, ""]
    return "\n".join(parts)


def draw_growth(ax: Axes, scale: dict[str, Any], metric: str, legend: bool = True) -> None:
    """The metric's median against the number of models, one line per subject; the whiskers
    span min–max."""
    models = scale["models"]
    for key in scale["subjects"]:
        cells = [scale["figures"][key][str(count)][metric] for count in models]
        medians = [cell["median"] for cell in cells]
        lower = [cell["median"] - cell["min"] for cell in cells]
        upper = [cell["max"] - cell["median"] for cell in cells]
        arm = scale["subjects"][key]["arm"]
        deferred, flat = key.endswith(DEFER_SUFFIX), key.endswith(FLAT_SUFFIX)
        ax.errorbar(
            models,
            medians,
            yerr=[lower, upper],
            label=key,
            color=colour(arm),
            linestyle="--" if deferred else ":" if flat else "-",
            marker="s" if deferred else "^" if flat else "o",
            markersize=4,
            capsize=3,
        )
    # Log on both axes: growth in proportion to M is a slope of one, and the smallest app's
    # figures stay readable beside the biggest's.
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(models, [str(count) for count in models])
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("models in the app (two routes each)")
    ax.set_ylabel(metric_label(scale, metric))
    ax.grid(axis="y", color=REFERENCE_COLOUR, linewidth=0.5)
    if legend:
        legend_outside(ax)


def growth_figure(scale: dict[str, Any], metric: str) -> Figure:
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    draw_growth(ax, scale, metric)
    return fig


def summary_figure(scale: dict[str, Any]) -> Figure:
    """Start-up and memory after every route once, side by side (scale.svg: for a README)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    draw_growth(left, scale, "to_health_s", legend=False)
    draw_growth(right, scale, "rss_routes_mib")
    fig.tight_layout()
    return fig


def html(results: dict[str, Any]) -> str:
    scale = results["scale"]
    body = "".join(f'<p class="summary">{escape(line)}</p>' for line in summary_lines(scale))
    body += f'<p class="note">{escape(versions_line(scale))}</p>'
    for metric in HEADLINE_METRICS:
        body += figure(
            to_svg(growth_figure(scale, metric)),
            f"{scale['metrics'][metric]['label']}: median of the fresh processes, whiskers "
            "min–max; dashed: defer_build=True; dotted: every route on the app itself.",
        )
    body += "<h2>Figures</h2>" + html_table(*figure_rows(scale))
    if scale["ratios"]:
        body += "<h2>Ratios</h2>" + html_table(*ratio_rows(scale))
    if any(scale["per_model"].values()):
        body += "<h2>Per model</h2>" + html_table(*per_model_rows(scale))
    body += f'<p class="note">{escape(NOTE)}</p>'
    return page(heading(results), body)


def write_reports(run_dir: Path, results: dict[str, Any]) -> list[Path]:
    charts = {"scale.svg": to_svg(summary_figure(results["scale"]))}
    return write_reports_into(run_dir, markdown(results), html(results), charts)
