"""The benchmark's charts, drawn from results.json alone (loadtest/output/charts.py draws them
as SVG). Each `*_figure` builds a matplotlib Figure (what the tests inspect for overlaps), each
`*_chart` its SVG. Legends sit outside the plotting area, so they never cover a bar or a value,
and a value is written past the end of its error bar, never on it."""

from typing import Any

from matplotlib.patches import Patch

from loadtest.analysis.stats import median_with_ci
from loadtest.output.charts import (
    REFERENCE_COLOUR,
    Axes,
    Figure,
    bar_with_value,
    colour,
    legend_outside,
    plt,
    shade_handles,
    to_svg,
)
from loadtest.pipeline.tables import Comparison, comparisons, health_path, scenario_label

# The reference experiment's published v2/v1 ratios (FastAPI 0.98 + Pydantic 1 against
# FastAPI 0.100-beta + Pydantic 2, ab -n 1000 -c 10, its own machine): ../shared/seeds.
REFERENCE_RATIOS = {"read": 2.92, "synthetic": 6.97, "write": 1.03}
MEMORY_MOMENTS = ("idle", "peak", "after")
PERCENTILES = ("p50_ms", "p95_ms", "p99_ms")


def scenario_axes(results: dict[str, Any], height: float = 3.0) -> tuple[Figure, list[Axes]]:
    scenarios = results["settings"]["scenarios"]
    figure, axes = plt.subplots(
        1,
        len(scenarios),
        figsize=(3.6 * len(scenarios), height),
        squeeze=False,
        layout="constrained",
    )
    for ax, name in zip(axes[0], scenarios, strict=True):
        ax.set_title(scenario_label(results, name))
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    return figure, list(axes[0])


def finish_ratio_axes(ax: Axes, labels: list[str], title: str) -> None:
    """Scenarios (their labels) along x, the line at 1 (no change) across, the legend
    outside."""
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("ratio of requests per second")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.margins(y=0.12)
    ax.set_title(title)
    legend_outside(ax)


def rps_figure(results: dict[str, Any]) -> Figure:
    """Median r/s of each arm's windows with the 95% CI of that median."""
    arms = list(results["apps"])
    figure, axes = scenario_axes(results)
    for ax, name in zip(axes, results["settings"]["scenarios"], strict=True):
        for index, arm in enumerate(arms):
            values = [
                w["rps"] for w in results["windows"] if w["arm"] == arm and w["scenario"] == name
            ]
            median, low, high = median_with_ci(values)
            if median is not None:
                bar_with_value(ax, index, median, low, high, f"{median:,.0f}", color=colour(arm))
        ax.set_xticks(range(len(arms)), arms)
        ax.set_ylabel("requests per second")
        ax.margins(y=0.15)
    figure.suptitle("Throughput: median r/s of the windows, with its 95% CI")
    return figure


def ratio_bar(
    ax: Axes,
    position: float,
    figures: dict[str, Any],
    comparison: Comparison,
    *,
    width: float,
    label: str | None,
    **style: Any,
) -> None:
    """One paired ratio with its 95% CI, in its arm's colour; hatched where the reference is
    not the baseline."""
    bar_with_value(
        ax,
        position,
        figures["estimate"],
        figures["ci95_low"],
        figures["ci95_high"],
        f"{figures['estimate']:.2f}x",
        width=width,
        color=colour(comparison.arm),
        hatch=None if comparison.over_baseline else "//",
        edgecolor="white",
        label=label,
        **style,
    )


def ratio_figure(results: dict[str, Any]) -> Figure:
    """The main chart: every ratio with its 95% CI, beside the reference experiment's."""
    pairs = comparisons(results)
    scenarios = results["settings"]["scenarios"]
    width = 0.8 / (len(pairs) + 1)
    figure, ax = plt.subplots(figsize=(3.2 * len(scenarios) + 3.0, 4.0), layout="constrained")
    for position, comparison in enumerate(pairs):
        for index, name in enumerate(scenarios):
            figures = comparison.figures(results, name)
            if not figures or figures["estimate"] is None:
                continue
            ratio_bar(
                ax,
                index + (position - len(pairs) / 2) * width,
                figures,
                comparison,
                width=width,
                label=comparison.label if index == 0 else None,
            )
    # The published study's bars beside the lab's own scenarios, never beside a compare file's.
    published = results.get("kind", "benchmark") == "benchmark"
    for index, name in enumerate(scenarios):
        if published and name in REFERENCE_RATIOS:
            bar_with_value(
                ax,
                index + (len(pairs) / 2) * width,
                REFERENCE_RATIOS[name],
                None,
                None,
                f"{REFERENCE_RATIOS[name]:.2f}x",
                width=width,
                color=REFERENCE_COLOUR,
                label=(
                    "published v2/v1 (FastAPI 0.98 + Pydantic 1\nagainst 0.100-beta + "
                    "Pydantic 2, a CRUD\napp, ab -c 10, their machine)"
                )
                if index == 0
                else None,
            )
    labels = [scenario_label(results, name) for name in scenarios]
    title = "Paired ratios with their 95% CI" + (", and the published study's" if published else "")
    finish_ratio_axes(ax, labels, title)
    return figure


def shade(position: int) -> float:
    """An arm's colour for its first measure, lighter for the later ones."""
    return 1.0 - 0.25 * position


def grouped_bars(
    ax: Axes,
    arms: list[str],
    groups: tuple[str, ...],
    value: Any,
) -> None:
    """One group of bars per arm, one bar per group entry (lighter for later entries)."""
    width = 0.8 / len(groups)
    for index, arm in enumerate(arms):
        for position, group in enumerate(groups):
            height = value(arm, group)
            if height is None:
                continue
            ax.bar(
                index + (position - (len(groups) - 1) / 2) * width,
                height,
                width,
                color=colour(arm),
                alpha=shade(position),
                edgecolor="white",
            )
    ax.set_xticks(range(len(arms)), arms)


def latency_figure(results: dict[str, Any]) -> Figure:
    arms = list(results["apps"])
    figure, axes = scenario_axes(results)
    for ax, name in zip(axes, results["settings"]["scenarios"], strict=True):

        def percentile(arm: str, key: str, name: str = name) -> float | None:
            return results["apps"][arm]["scenarios"][name][key]

        grouped_bars(ax, arms, PERCENTILES, percentile)
        ax.set_ylabel("ms")
    shades = [(label, shade(position)) for position, label in enumerate(("p50", "p95", "p99"))]
    legend_outside(axes[-1], **shade_handles(arms, shades))
    figure.suptitle("Latency percentiles over every counted request")
    return figure


def cpu_figure(results: dict[str, Any]) -> Figure:
    """CPU per request: the app's process tree, with the embedded PostgreSQL's on top."""
    arms = list(results["apps"])
    figure, axes = scenario_axes(results)
    with_database = False
    for ax, name in zip(axes, results["settings"]["scenarios"], strict=True):
        for index, arm in enumerate(arms):
            figures = results["apps"][arm]["scenarios"][name]
            app, db = figures["app_cpu_ms_per_request"], figures["db_cpu_ms_per_request"]
            if app is None:
                continue
            ax.bar(index, app, color=colour(arm))
            if db:
                with_database = True
                ax.bar(index, db, bottom=app, color=REFERENCE_COLOUR)
        ax.set_xticks(range(len(arms)), arms)
        ax.set_ylabel("CPU ms per request")
    if with_database:
        legend = shade_handles(arms, [("app", 1.0)])
        legend["handles"].append(Patch(facecolor=REFERENCE_COLOUR))
        legend["labels"].append("PostgreSQL")
        legend_outside(axes[-1], **legend)
    figure.suptitle("CPU per request: the app, and PostgreSQL on top (median over windows)")
    return figure


def memory_figure(results: dict[str, Any]) -> Figure:
    """RSS at each moment as a dot per arm, its value beside it, on an axis that spans the
    values (not from 0): a few MiB between the arms is what there is to see."""
    arms = list(results["apps"])
    figure, ax = plt.subplots(figsize=(8.0, 0.5 * len(arms) * len(MEMORY_MOMENTS) + 1.4))
    values = []
    for row, moment in enumerate(MEMORY_MOMENTS):
        for offset, arm in enumerate(arms):
            rss = results["apps"][arm]["memory"][f"{moment}_rss_mib"]
            if rss is None:
                continue
            y = row * (len(arms) + 1) + offset
            values.append(rss)
            ax.plot(
                [rss],
                [y],
                "o",
                markersize=8,
                color=colour(arm),
                label=arm if row == 0 else None,
            )
            ax.annotate(
                f"{rss:,.1f} MiB",
                (rss, y),
                xytext=(8, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
            )
    if values:
        spread = max(max(values) - min(values), 4.0)
        ax.set_xlim(min(values) - 0.25 * spread, max(values) + 0.6 * spread)
    ax.set_yticks(
        [row * (len(arms) + 1) + (len(arms) - 1) / 2 for row in range(len(MEMORY_MOMENTS))],
        [f"{moment}" for moment in MEMORY_MOMENTS],
    )
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    ax.set_xlabel(
        "RSS of the app's process tree, MiB (median over repeats; the axis does not start at 0)"
    )
    ax.set_title("Memory: idle, peak under load, after")
    legend_outside(ax)
    figure.set_layout_engine("constrained")
    return figure


def startup_figure(results: dict[str, Any]) -> Figure | None:
    arms = [arm for arm in results["apps"] if results["apps"][arm].get("startup")]
    if not arms:
        return None
    figure, ax = plt.subplots(figsize=(8.0, 0.7 * len(arms) + 1.4), layout="constrained")
    for index, arm in enumerate(arms):
        startup = results["apps"][arm]["startup"]
        for key, offset, alpha in (("to_health_s", -0.18, 1.0), ("import_s", 0.18, 0.5)):
            value = startup[key]
            if value is None:  # a compare file's service: no import timing
                continue
            bar_with_value(
                ax,
                index + offset,
                value,
                startup[f"{key}_min"],
                startup[f"{key}_max"],
                f"{value:.2f} s",
                width=0.34,
                color=colour(arm),
                alpha=alpha,
                horizontal=True,
            )
    ax.set_yticks(range(len(arms)), arms)
    ax.invert_yaxis()
    ax.margins(x=0.2)
    ax.set_xlabel("seconds: median (min–max) over fresh starts")
    ax.set_title("Start-up")
    shades = [(f"to first {health_path(results)}", 1.0), ("import of the app", 0.5)]
    legend_outside(ax, **shade_handles(arms, shades))
    return figure


def run_comparison_figure(runs: list[tuple[str, dict[str, Any]]]) -> Figure:
    """Two runs' ratios side by side, each with its CI (e.g. before and after an upgrade)."""
    scenarios = list(
        dict.fromkeys(name for _, results in runs for name in results["settings"]["scenarios"])
    )
    labels = list(
        dict.fromkeys(
            comparison.label for _, results in runs for comparison in comparisons(results)
        )
    )
    slots = [(label, run_index) for label in labels for run_index in range(len(runs))]
    width = 0.8 / max(len(slots), 1)
    figure, ax = plt.subplots(figsize=(3.4 * len(scenarios) + 3.5, 4.0), layout="constrained")
    for position, (label, run_index) in enumerate(slots):
        name_of_run, results = runs[run_index]
        comparison = next((c for c in comparisons(results) if c.label == label), None)
        for index, name in enumerate(scenarios):
            if comparison is None or name not in results["settings"]["scenarios"]:
                continue  # this run lacks that ratio
            figures = comparison.figures(results, name)
            if not figures or figures["estimate"] is None:
                continue
            ratio_bar(
                ax,
                index + (position - (len(slots) - 1) / 2) * width,
                figures,
                comparison,
                width=width,
                label=f"{label}, {name_of_run}" if index == 0 else None,
                alpha=1.0 if run_index == 0 else 0.55,
                fontsize=7,
            )
    labels_of = [scenario_label(runs[-1][1], name) for name in scenarios]
    finish_ratio_axes(ax, labels_of, "Two runs: paired ratios with their 95% CI")
    return figure


def rps_chart(results: dict[str, Any]) -> str:
    return to_svg(rps_figure(results))


def ratio_chart(results: dict[str, Any]) -> str:
    return to_svg(ratio_figure(results))


def latency_chart(results: dict[str, Any]) -> str:
    return to_svg(latency_figure(results))


def cpu_chart(results: dict[str, Any]) -> str:
    return to_svg(cpu_figure(results))


def memory_chart(results: dict[str, Any]) -> str:
    return to_svg(memory_figure(results))


def startup_chart(results: dict[str, Any]) -> str | None:
    figure = startup_figure(results)
    return None if figure is None else to_svg(figure)


def run_comparison_chart(runs: list[tuple[str, dict[str, Any]]]) -> str:
    return to_svg(run_comparison_figure(runs))
