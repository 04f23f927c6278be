"""The versions run's report in the terminal, report.md and report.html (charts inline), from
results.json alone."""

from html import escape
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.lab.arms import BASELINE
from loadtest.lab.files import write_text_safely
from loadtest.load.scenarios import SCENARIOS
from loadtest.output.charts import REFERENCE_COLOUR, Axes, bar_with_value, colour, plt, to_svg
from loadtest.output.html import figure, flags_section, html_table, page
from loadtest.output.text import format_number, format_ratio, markdown_table, print_table

TITLE = "Which Pydantic 2 (and FastAPI) to land on: the lab's v2 app across versions"
CHART = "versions.svg"
CHART_CAPTION = (
    "Each version's r/s over v1 per scenario (95% CI), then start-up and idle RSS per arm (the "
    "generated app's with their range over its rounds); the dashed line is v1's level."
)
STEP_CAPTION = (
    "Each step: the version's r/s over the version before it, both measured in the same paired "
    "windows (with v1; a --python step's v1 on each Python has a row of its own), median of the "
    "paired ratios and its 95% CI over the step's rounds; above 1 the step made requests faster. "
    "CPU: the app's CPU per request, the same way (below 1: cheaper). N models: the generated "
    "app's start-up and idle RSS, the version over the version before, median of the ratios "
    "paired by round (below 1: cheaper; an interval needs 6 rounds)."
)
LEVEL_CAPTION = (
    "Each version over v1 (Pydantic 1; with --python, v1 on the same Python), in the step that "
    "ends on it (the first: in the step that starts from it). Idle RSS: median of its "
    "processes after start-up, before any load. Start-up: median seconds to the first /health "
    "over its fresh starts. N models: the same for a generated app of N models (scale's "
    "service shape), median over its rounds."
)


def scenario_labels(results: dict[str, Any]) -> list[tuple[str, str]]:
    return [(name, SCENARIOS[name].label) for name in results["settings"]["scenarios"]]


# What a step can move, in the order a step's name says it (Starlette moves with FastAPI).
MOVED = (
    ("python", "Python"),
    ("pydantic", "Pydantic"),
    ("fastapi", "FastAPI"),
    ("starlette", "Starlette"),
)


def version_of(results: dict[str, Any], arm: str, package: str) -> str:
    return str(results["arms"][arm]["versions"].get(package) or "?")


def step_name(results: dict[str, Any], step: dict[str, Any]) -> str:
    """`Pydantic 2.7.4 → 2.8.2`, or `FastAPI 0.125.0 → 0.129.2, Starlette 0.50.0 → 0.52.1`:
    what differs between the step's two arms, as their /health said."""
    moved = [
        f"{name} {before} → {after}"
        for package, name in MOVED
        if (before := version_of(results, step["from"], package))
        != (after := version_of(results, step["to"], package))
    ]
    return ", ".join(moved) or f"{step['from']} → {step['to']}"


def short_name(results: dict[str, Any], arm: str) -> str:
    """An arm on a chart's axis: its Pydantic, its FastAPI where that is not the first arm's
    (v1's, app_v2's too), and its Python where the run's arms are on more than one."""
    first = next(iter(results["arms"]))
    name = version_of(results, arm, "pydantic")
    fastapi = version_of(results, arm, "fastapi")
    if fastapi != version_of(results, first, "fastapi"):
        name += f"\nFastAPI {fastapi}"
    if len({version_of(results, other, "python") for other in results["arms"]}) > 1:
        name += f"\nPython {version_of(results, arm, 'python')}"
    return name


def is_baseline(results: dict[str, Any], arm: str) -> bool:
    """Whether the arm is the one others are over (v1, or v1 on a Python of --python's)."""
    return arm == results["arms"][arm].get("baseline", BASELINE)


def step_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    labels = scenario_labels(results)
    header = ["step", *[f"{label} [95% CI]" for _, label in labels]]
    header += [f"{label} CPU/request" for _, label in labels]
    models = generated_models(results)
    if models:
        header += [f"{models} models: start-up", f"{models} models: idle RSS"]
    rows = []
    for step in results["steps"]:
        rows.append(step_row(step_name(results, step), step, "step", "generated", labels, models))
        if "v1_generated" in step:  # --python: v1's own step between the same two Pythons
            name = f"{step_name(results, step)}, v1"
            rows.append(step_row(name, step, "v1_step", "v1_generated", labels, models))
    return header, rows


def step_row(
    name: str,
    step: dict[str, Any],
    ratio: str,
    generated: str,
    labels: list[tuple[str, str]],
    models: int | None,
) -> list[str]:
    """One step's row: its `ratio` per scenario, its CPU per request, and its `generated`
    app's start-up and idle RSS ratios."""
    figures = step["scenarios"]
    row = [
        name,
        *[format_ratio(figures[scenario][ratio]) for scenario, _ in labels],
        *[format_ratio(figures[scenario][ratio]["cpu_per_request"]) for scenario, _ in labels],
    ]
    if models:
        # Two or three rounds give no interval: the median of the paired ratios, unmarked.
        row += [
            format_ratio(step[generated][metric], mark=False)
            for metric in ("to_health_s", "rss_idle_mib")
        ]
    return row


def generated_models(results: dict[str, Any]) -> int | None:
    """The generated app's size, when the run started one (runs before it did not)."""
    generated = next(iter(results["arms"].values())).get("generated")
    return generated["models"] if generated else None


def generated_figure(figures: dict[str, Any], metric: str, digits: int) -> str:
    """An arm's generated-app median, or why it has none."""
    generated = figures["generated"]
    if generated["unfinished"] and not generated["processes"]:
        return generated["unfinished"]
    return format_number(generated[metric]["median"], digits)


def level_of(results: dict[str, Any], arm: str, scenario: str) -> dict[str, Any] | None:
    """The arm's ratio over v1: from the step that ends on it, or that starts from it."""
    for step in results["steps"]:
        if step["to"] == arm:
            return step["scenarios"][scenario]["to_over_v1"]
    for step in results["steps"]:
        if step["from"] == arm:
            return step["scenarios"][scenario]["from_over_v1"]
    return None


def level_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    labels = scenario_labels(results)
    header = ["arm", *[name for _, name in MOVED], *[f"{label} over v1" for _, label in labels]]
    header += ["idle RSS MiB", "start-up s"]
    models = generated_models(results)
    if models:
        header += [f"{models} models: start-up s", f"{models} models: idle RSS MiB"]
    rows = []
    for arm, figures in results["arms"].items():
        startup = figures["startup"] or {}
        row = [
            arm,
            *[version_of(results, arm, package) for package, _ in MOVED],
            *[
                "baseline"
                if is_baseline(results, arm)
                else format_ratio(level_of(results, arm, name))
                for name, _ in labels
            ],
            format_number(figures["memory"]["idle_rss_mib"]),
            format_number(startup.get("to_health_s"), 2),
        ]
        if models:
            row += [
                generated_figure(figures, "to_health_s", 2),
                generated_figure(figures, "rss_idle_mib", 0),
            ]
        rows.append(row)
    return header, rows


def heading(results: dict[str, Any]) -> str:
    settings, host = results["settings"], results["host"]
    return (
        f"{results['started_at']} · {host['cpu_model']}, {host['cores']} cores · "
        f"{settings['steps']} steps of {settings['pairs']} rounds of {settings['window_s']:g}s "
        f"windows · {results['pinning']['note']}"
    )


def print_report(results: dict[str, Any], console: Console) -> None:
    header, rows = step_rows(results)
    print_table(console, header, rows, title="Each step over the one before", caption=STEP_CAPTION)
    header, rows = level_rows(results)
    print_table(console, header, rows, title="Each version over v1", caption=LEVEL_CAPTION)
    for flag in results["flags"]:
        console.print(f"⚠ {flag}", style="bold yellow", highlight=False)


def draw_levels(ax: Axes, results: dict[str, Any], scenario: str, label: str) -> None:
    """One scenario's panel: each version's r/s over v1 with its interval, v1's level across."""
    arms = [arm for arm in results["arms"] if level_of(results, arm, scenario)]
    for position, arm in enumerate(arms):
        ratio = level_of(results, arm, scenario) or {}
        if ratio.get("estimate") is None:
            continue
        bar_with_value(
            ax,
            position,
            ratio["estimate"],
            ratio.get("ci95_low"),
            ratio.get("ci95_high"),
            f"{ratio['estimate']:.2f}x",
            width=0.7,
            color=colour(arm),
        )
    ax.axhline(1.0, color=REFERENCE_COLOUR, linestyle="--", linewidth=1)
    ax.set_xticks(range(len(arms)), [short_name(results, arm) for arm in arms], fontsize=7)
    ax.set_title(f"{label} r/s over v1 [95% CI]", fontsize=9)


RESOURCE_TITLES = {
    "start-up": "start-up to the first /health, s",
    "memory": "idle RSS, MiB",
    "generated start-up": "{models} models: start-up, s",
    "generated memory": "{models} models: idle RSS, MiB",
}


def draw_resource(ax: Axes, results: dict[str, Any], what: str) -> None:
    """A start-up or idle RSS per arm (v1 first), v1's level across; the generated app's with
    its range over the rounds."""
    arms = list(results["arms"])
    for position, arm in enumerate(arms):
        value, low, high = resource_of(results, arm, what)
        if value is not None:
            text = f"{value:.2f}" if what.endswith("start-up") else f"{value:.0f}"
            bar_with_value(ax, position, value, low, high, text, width=0.7, color=colour(arm))
    # v1's level across, where every arm is over the one v1 (--python's v1s are bars of their
    # own, on other builds than the lab's v1).
    one_v1 = all(not is_baseline(results, arm) or arm == BASELINE for arm in arms)
    baseline = resource_of(results, BASELINE, what)[0] if one_v1 else None
    if baseline is not None:
        ax.axhline(baseline, color=REFERENCE_COLOUR, linestyle="--", linewidth=1)
    ax.set_xticks(range(len(arms)), [short_name(results, arm) for arm in arms], fontsize=7)
    ax.set_title(RESOURCE_TITLES[what].format(models=generated_models(results)), fontsize=9)


Figure = tuple[float | None, float | None, float | None]  # a value, its range's ends


def resource_of(results: dict[str, Any], arm: str, what: str) -> Figure:
    figures = results["arms"][arm]
    if what == "start-up":
        return (figures["startup"] or {}).get("to_health_s"), None, None
    if what == "memory":
        return figures["memory"]["idle_rss_mib"], None, None
    metric = "to_health_s" if what == "generated start-up" else "rss_idle_mib"
    summary = figures["generated"][metric]
    return summary["median"], summary["min"], summary["max"]


def versions_chart(results: dict[str, Any]) -> str:
    """Every scenario's ratio over v1 per version, then start-up and idle RSS per arm, three
    panels a row, v1's level drawn across each (dashed)."""
    labels = scenario_labels(results)
    resources = ["start-up", "memory"]
    if generated_models(results):
        resources += ["generated start-up", "generated memory"]
    panels = len(labels) + len(resources)
    columns = min(3, panels)
    rows = -(-panels // columns)
    width = max(3.4, 0.5 * len(results["arms"]) + 1.4)
    figure_, grid = plt.subplots(rows, columns, figsize=(width * columns, 3.3 * rows))
    axes = list(grid.flat)
    for ax, (name, label) in zip(axes, labels, strict=False):
        draw_levels(ax, results, name, label)
    for ax, what in zip(axes[len(labels) :], resources, strict=False):
        draw_resource(ax, results, what)
    for ax in axes[:panels]:
        ax.tick_params(axis="x", labelrotation=45)
        bottom, top = ax.get_ylim()
        ax.set_ylim(bottom, top * 1.15)  # room for the values over the intervals
    for ax in axes[panels:]:
        ax.set_visible(False)
    figure_.tight_layout()
    return to_svg(figure_)


def write_reports(run_dir: Path, results: dict[str, Any]) -> list[Path]:
    steps_header, steps = step_rows(results)
    levels_header, levels = level_rows(results)
    flags = [f"- ⚠ {flag}" for flag in results["flags"]] or ["No flags."]
    markdown = [
        f"# {TITLE}",
        "",
        heading(results),
        "",
        "## Each step over the one before",
        "",
        markdown_table(steps_header, steps),
        "",
        STEP_CAPTION,
        "",
        "## Each version over v1",
        "",
        markdown_table(levels_header, levels),
        "",
        LEVEL_CAPTION,
        "",
        *flags,
    ]
    report_md = run_dir / "report.md"
    write_text_safely(report_md, "\n".join(markdown) + "\n")
    chart = versions_chart(results)
    chart_path = run_dir / CHART
    write_text_safely(chart_path, chart)
    body = (
        f'<p class="note">{escape(heading(results))}</p>'
        f"<h2>Each step over the one before</h2>{html_table(steps_header, steps)}"
        f'<p class="note">{escape(STEP_CAPTION)}</p>'
        f"<h2>Each version over v1</h2>{html_table(levels_header, levels)}"
        f'<p class="note">{escape(LEVEL_CAPTION)}</p>'
        + figure(chart, CHART_CAPTION)
        + flags_section(results["flags"], "")
    )
    report_html = run_dir / "report.html"
    write_text_safely(report_html, page(TITLE, body))
    return [report_md, report_html, chart_path]
