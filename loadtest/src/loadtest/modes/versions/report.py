"""The versions run's report in the terminal, report.md and report.html (charts inline), from
results.json alone."""

from html import escape
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.lab.arms import BASELINE
from loadtest.lab.files import write_text_safely
from loadtest.load.scenarios import SCENARIOS
from loadtest.output.charts import REFERENCE_COLOUR, colour, plt, to_svg
from loadtest.output.html import figure, flags_section, html_table, page
from loadtest.output.text import format_number, format_ratio, markdown_table, print_table

TITLE = "Which Pydantic 2 to land on: the lab's v2 app across the minors"
STEP_CAPTION = (
    "Each step: the minor's r/s over the minor before it, both measured in the same three-arm "
    "paired windows (with v1), median of the paired ratios and its 95% CI over the step's "
    "rounds; above 1 the step made requests faster. CPU: the app's CPU per request, the same "
    "way (below 1: cheaper)."
)
LEVEL_CAPTION = (
    "Each minor over v1 (Pydantic 1), in the step that ends on it (the first minor: in the "
    "step that starts from it). Idle RSS: median of its processes after start-up, before any "
    "load. Start-up: median seconds to the first /health over its fresh starts."
)


def scenario_labels(results: dict[str, Any]) -> list[tuple[str, str]]:
    return [(name, SCENARIOS[name].label) for name in results["settings"]["scenarios"]]


# What a step can move, in the order a step's name says it (Starlette moves with FastAPI).
MOVED = (("pydantic", "Pydantic"), ("fastapi", "FastAPI"), ("starlette", "Starlette"))


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
    """An arm on a chart's axis: its Pydantic, and its FastAPI where that is not app_v2's."""
    pydantic = version_of(results, arm, "pydantic")
    fastapi = version_of(results, arm, "fastapi")
    lab_fastapi = version_of(results, BASELINE, "fastapi")
    return pydantic if fastapi == lab_fastapi else f"{pydantic}\nFastAPI {fastapi}"


def step_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    labels = scenario_labels(results)
    header = ["step", *[f"{label} [95% CI]" for _, label in labels]]
    header += [f"{label} CPU/request" for _, label in labels]
    rows = []
    for step in results["steps"]:
        name = step_name(results, step)
        figures = step["scenarios"]
        rows.append(
            [
                name,
                *[format_ratio(figures[scenario]["step"]) for scenario, _ in labels],
                *[
                    format_ratio(figures[scenario]["step"]["cpu_per_request"])
                    for scenario, _ in labels
                ],
            ]
        )
    return header, rows


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
    rows = []
    for arm, figures in results["arms"].items():
        startup = figures["startup"] or {}
        rows.append(
            [
                arm,
                *[version_of(results, arm, package) for package, _ in MOVED],
                *[
                    "baseline" if arm == BASELINE else format_ratio(level_of(results, arm, name))
                    for name, _ in labels
                ],
                format_number(figures["memory"]["idle_rss_mib"]),
                format_number(startup.get("to_health_s"), 2),
            ]
        )
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
    print_table(console, header, rows, title="Each minor over v1", caption=LEVEL_CAPTION)
    for flag in results["flags"]:
        console.print(f"⚠ {flag}", style="bold yellow", highlight=False)


def level_chart(results: dict[str, Any], scenario: str, label: str) -> str | None:
    """The minors' ratio over v1 on one scenario, with intervals; v1's level drawn across."""
    arms = [arm for arm in results["arms"] if level_of(results, arm, scenario)]
    if not arms:
        return None
    figure_, ax = plt.subplots(figsize=(max(4.0, 0.8 * len(arms) + 1.5), 3.2))
    for position, arm in enumerate(arms):
        ratio = level_of(results, arm, scenario) or {}
        value = ratio.get("estimate")
        if value is None:
            continue
        low, high = ratio.get("ci95_low"), ratio.get("ci95_high")
        errors = [[value - low], [high - value]] if low is not None and high is not None else None
        ax.bar(position, value, 0.7, yerr=errors, capsize=3, color=colour(arm))
        ax.annotate(
            f"{value:.2f}x",
            (position, high if high is not None else value),
            xytext=(0, 4),
            textcoords="offset points",
            ha="center",
            fontsize=8,
        )
    ax.axhline(1.0, color=REFERENCE_COLOUR, linestyle="--", linewidth=1, label="v1 (Pydantic 1)")
    ax.set_xticks(range(len(arms)), [short_name(results, arm) for arm in arms], fontsize=8)
    ax.set_ylabel(f"{label} r/s over v1")
    ax.set_title(f"{label}: each minor over v1 [95% CI]", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    return to_svg(figure_)


def resource_chart(results: dict[str, Any], key: str, what: str) -> str | None:
    """Idle RSS or start-up per arm, v1's level drawn across."""
    arms = list(results["arms"])
    values = [
        (
            results["arms"][arm]["memory"]["idle_rss_mib"]
            if key == "memory"
            else (results["arms"][arm]["startup"] or {}).get("to_health_s")
        )
        for arm in arms
    ]
    if all(value is None for value in values):
        return None
    figure_, ax = plt.subplots(figsize=(max(4.0, 0.8 * len(arms) + 1.5), 3.0))
    for position, (arm, value) in enumerate(zip(arms, values, strict=True)):
        if value is not None:
            ax.bar(position, value, 0.7, color=colour(arm))
    if values[0] is not None:
        ax.axhline(values[0], color=REFERENCE_COLOUR, linestyle="--", linewidth=1)
    ax.set_xticks(range(len(arms)), [short_name(results, arm) for arm in arms], fontsize=8)
    ax.set_ylabel(what)
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
        "## Each minor over v1",
        "",
        markdown_table(levels_header, levels),
        "",
        LEVEL_CAPTION,
        "",
        *flags,
    ]
    report_md = run_dir / "report.md"
    write_text_safely(report_md, "\n".join(markdown) + "\n")
    charts = [
        figure(level_chart(results, name, label), f"{label}: each minor's r/s over v1's")
        for name, label in scenario_labels(results)
    ]
    charts += [
        figure(resource_chart(results, "memory", "idle RSS, MiB"), "Idle RSS per arm"),
        figure(resource_chart(results, "startup", "start-up, s"), "Start-up per arm"),
    ]
    body = (
        f'<p class="note">{escape(heading(results))}</p>'
        f"<h2>Each step over the one before</h2>{html_table(steps_header, steps)}"
        f'<p class="note">{escape(STEP_CAPTION)}</p>'
        f"<h2>Each minor over v1</h2>{html_table(levels_header, levels)}"
        f'<p class="note">{escape(LEVEL_CAPTION)}</p>'
        + "".join(charts)
        + flags_section(results["flags"], "")
    )
    report_html = run_dir / "report.html"
    write_text_safely(report_html, page(TITLE, body))
    return [report_md, report_html]
