"""The scale mode's report: in the terminal, report.md and report.html (with start-up and memory
against the number of models), from results.json alone."""

from html import escape
from pathlib import Path
from typing import Any

from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter
from rich.console import Console

from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.generated.subjects import DEFER_SUFFIX, FLAT_SUFFIX
from loadtest.modes.scale.results import HEADLINE_METRICS
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
    "Each figure: the median over fresh processes (min–max in parentheses), one app at a time "
    "on the app CPUs. Ratios: the subject's figure over the reference's in the same round "
    "(above 1: it costs more), median of the rounds with its 95% CI (from 6 processes on). Per "
    "model: the growth of the median from the smallest app to the biggest, divided by what was "
    "added (models, union members or routes a model)."
)


def metric_label(scale: dict[str, Any], metric: str) -> str:
    facts = scale["metrics"][metric]
    return f"{facts['label']}, {facts['unit']}"


def shape_of(scale: dict[str, Any]) -> str:
    """The run's shape (runs before shapes were the service shape)."""
    return str(scale.get("shape", "service"))


def size_label(scale: dict[str, Any]) -> str:
    """What the sizes count: models, union members, routes per model."""
    return str(scale.get("size_label", "models"))


def unfinished_text(reason: str) -> str:
    """A table's short form: "over 60 s", "failed: RecursionError", "failed: /openapi.json
    500" (the whole message is in the summary lines)."""
    if not reason.startswith("failed: "):
        return reason
    error, status = reason.removeprefix("failed: "), ""
    if error.startswith("/openapi.json "):
        status, _, error = error.removeprefix("/openapi.json ").partition(", ")
        status += " "
    return f"failed: {status}{error.split(':')[0].split('.')[-1]}"


def figure_cell(cell: dict[str, Any], digits: int) -> str:
    if cell["median"] is None:
        return unfinished_text(cell["unfinished"]) if cell.get("unfinished") else "–"
    return (
        f"{format_number(cell['median'], digits)} "
        f"({format_number(cell['min'], digits)}–{format_number(cell['max'], digits)})"
    )


def figure_rows(scale: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    keys = list(scale["subjects"])
    header = ["metric", size_label(scale), *keys]
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
    header = ["metric", size_label(scale), *names]
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
    header = [f"per {one_of(size_label(scale))} added", *keys]
    rows = []
    for metric, facts in scale["metrics"].items():
        unit = "ms" if facts["unit"] == "s" else "KiB"
        row = [f"{facts['label']}, {unit}"]
        row += [format_number(scale["per_model"][key].get(metric), 1) for key in keys]
        rows.append(row)
    return header, rows


def one_of(label: str) -> str:
    """ "models" -> "model", "union members" -> "union member", "routes per model" -> "route
    per model"."""
    first, _, rest = label.partition(" per ")
    return first.removesuffix("s") + (f" per {rest}" if rest else "")


def summary_lines(scale: dict[str, Any]) -> list[str]:
    """What did not finish, first; then per ratio (over v1, or the first one there is) the
    headline metrics at the biggest size both subjects finished."""
    label = size_label(scale)
    lines = []
    for key, by_size in scale["figures"].items():
        for size in scale["models"]:
            why = by_size[str(size)]["to_health_s"].get("unfinished")
            if why and not why.startswith("not run"):
                lines.append(f"{key} at {size} {label}: {why}.")
                break
    for name, ratio in scale["ratios"].items():
        finished = [
            size
            for size in scale["models"]
            if ratio["by_models"][str(size)]["to_health_s"].get("estimate") is not None
        ]
        biggest = str(max(finished or scale["models"]))
        parts = [
            f"{scale['metrics'][metric]['label']} "
            f"{format_ratio(ratio['by_models'][biggest][metric], mark=False)}"
            for metric in HEADLINE_METRICS
        ]
        lines.append(f"{name} at {biggest} {label}: {'; '.join(parts)}.")
    costs = []
    for key, per_model in scale["per_model"].items():
        if "to_health_s" in per_model:
            costs.append(
                f"{key} {format_number(per_model['to_health_s'], 1)} ms and "
                f"{format_number(per_model['rss_routes_mib'], 0)} KiB"
            )
    if costs:
        added = (
            "Each model added (two routes)"
            if shape_of(scale) == "service"
            else f"Each {one_of(label)} added"
        )
        lines.append(
            f"{added} costs start-up and memory after every route once: " + ", ".join(costs) + "."
        )
    return lines


def heading(results: dict[str, Any]) -> str:
    scale = results["scale"]
    host = results["host"]
    shape = shape_of(scale)
    title = TITLE if shape == "service" else f"{TITLE}, the {shape} shape"
    return (
        f"{title}: {', '.join(scale['subjects'])} — {', '.join(map(str, scale['models']))} "
        f"{size_label(scale)}, {processes_each(results['settings']['processes'])}, on "
        f"{host['cpu_model']}"
    )


def processes_each(processes: int) -> str:
    return f"{processes} fresh process{'' if processes == 1 else 'es'} each"


def ratios_title(results: dict[str, Any]) -> str:
    if results["settings"]["processes"] < MIN_PAIRS_FOR_CI:
        return (
            f"Ratios, paired by round (no 95% CI: it needs {MIN_PAIRS_FOR_CI} processes each, "
            "--processes)"
        )
    return "Ratios, paired by round [95% CI]"


def versions_line(scale: dict[str, Any]) -> str:
    parts = []
    for key, facts in scale["subjects"].items():
        versions = facts["versions"]
        if versions.get("pydantic_core"):  # Pydantic 2: its core is the compiled part
            built = f" (pydantic-core {versions['pydantic_core']})"
        else:
            built = " (compiled)" if versions.get("pydantic_compiled") else ""
        parts.append(
            f"{key}: Pydantic {versions.get('pydantic', '?')}{built}, "
            f"FastAPI {versions.get('fastapi', '?')}"
        )
    return "; ".join(parts) + "."


def print_report(results: dict[str, Any], console: Console) -> None:
    scale = results["scale"]
    for line in summary_lines(scale):
        console.print(line, highlight=False)
    print_table(console, *figure_rows(scale), title=heading(results))
    if scale["ratios"]:
        print_table(console, *ratio_rows(scale), title=ratios_title(results))
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
        finished = [
            (count, cell)
            for count in models
            if (cell := scale["figures"][key][str(count)][metric])["median"] is not None
        ]
        if not finished:
            continue
        medians = [cell["median"] for _, cell in finished]
        lower = [cell["median"] - cell["min"] for _, cell in finished]
        upper = [cell["max"] - cell["median"] for _, cell in finished]
        arm = scale["subjects"][key]["arm"]
        deferred, flat = key.endswith(DEFER_SUFFIX), key.endswith(FLAT_SUFFIX)
        variant = bool(scale["subjects"][key].get("variant"))
        ax.errorbar(
            [count for count, _ in finished],
            medians,
            yerr=[lower, upper],
            label=key,
            color=colour(arm),
            linestyle="--" if deferred else ":" if flat else "-." if variant else "-",
            marker="s" if deferred else "^" if flat else "D" if variant else "o",
            # Hollow for what differs from the arm's own app (defer_build, a shape's variant):
            # told apart from the arm's solid line at a glance, not by its dash alone.
            markerfacecolor="white" if variant or deferred else None,
            markersize=5,
            capsize=3,
        )
    # Log on both axes: growth in proportion to M is a slope of one, and the smallest app's
    # figures stay readable beside the biggest's.
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(models, [str(count) for count in models])
    ax.xaxis.set_minor_formatter(NullFormatter())  # matplotlib's own would be mathematics
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(
        "models in the app (two routes each)"
        if shape_of(scale) == "service"
        else f"{size_label(scale)} (the {shape_of(scale)} shape)"
    )
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
            "min–max"
            + (
                "; dashed, hollow squares: defer_build=True"
                if any(facts["defer_build"] for facts in scale["subjects"].values())
                else ""
            )
            + (
                "; dotted: every route on the app itself"
                if any(facts["flat"] for facts in scale["subjects"].values())
                else ""
            )
            + (
                "; dash-dot, hollow: the shape's variant"
                if any(facts.get("variant") for facts in scale["subjects"].values())
                else ""
            )
            + ".",
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
