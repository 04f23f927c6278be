"""The benchmark's charts, drawn from results.json alone (loadtest/output/charts.py)."""

from typing import Any

from loadtest.analysis.stats import median_with_ci
from loadtest.load.scenarios import SCENARIOS
from loadtest.modes.benchmark.tables import comparisons
from loadtest.output.charts import (
    REFERENCE_COLOUR,
    Axes,
    Figure,
    colour,
    error_bars,
    finish,
    grouped_bars,
    plt,
    to_svg,
)

# The reference experiment's published v2/v1 ratios (FastAPI 0.98 + Pydantic 1 against
# FastAPI 0.100-beta + Pydantic 2, ab -n 1000 -c 10, its own machine): ../shared/seeds.
REFERENCE_RATIOS = {"read": 2.92, "synthetic": 6.97, "write": 1.03}


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
        ax.set_title(SCENARIOS[name].label)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    return figure, list(axes[0])


def ratio_axis(ax: Axes, scenarios: list[str]) -> None:
    """Scenarios along x, and the line at 1 (no change) across."""
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(scenarios)), [SCENARIOS[name].label for name in scenarios])


def rps_chart(results: dict[str, Any]) -> str:
    """Median r/s of each arm's windows with the 95% CI of that median."""
    arms = list(results["apps"])
    figure, axes = scenario_axes(results)
    for ax, name in zip(axes, results["settings"]["scenarios"], strict=True):
        for index, arm in enumerate(arms):
            values = [
                w["rps"] for w in results["windows"] if w["arm"] == arm and w["scenario"] == name
            ]
            median, low, high = median_with_ci(values)
            if median is None:
                continue
            ax.bar(index, median, color=colour(arm), yerr=error_bars(median, low, high), capsize=4)
            ax.annotate(
                f"{median:,.0f}",
                (index, median),
                ha="center",
                va="bottom",
                xytext=(0, 8),
                textcoords="offset points",
                fontsize=8,
            )
        ax.set_xticks(range(len(arms)), arms)
        ax.set_ylabel("requests per second")
    figure.suptitle("Throughput: median r/s of the windows, with its 95% CI")
    return to_svg(figure)


def ratio_chart(results: dict[str, Any]) -> str:
    """The main chart: every ratio with its 95% CI, beside the reference experiment's."""
    pairs = comparisons(results)
    scenarios = results["settings"]["scenarios"]
    width = 0.8 / (len(pairs) + 1)
    figure, ax = plt.subplots(figsize=(3.2 * len(scenarios) + 1.5, 4.0))
    for position, comparison in enumerate(pairs):
        arm, label = comparison.arm, comparison.label
        for index, name in enumerate(scenarios):
            figures = comparison.figures(results, name)
            if not figures or figures["estimate"] is None:
                continue
            x = index + (position - len(pairs) / 2) * width
            ax.bar(
                x,
                figures["estimate"],
                width,
                color=colour(arm),
                hatch=None if comparison.over_baseline else "//",
                edgecolor="white",
                label=label if index == 0 else None,
                yerr=error_bars(figures["estimate"], figures["ci95_low"], figures["ci95_high"]),
                capsize=3,
            )
            ax.annotate(
                f"{figures['estimate']:.2f}x",
                (x, figures["estimate"]),
                ha="center",
                va="bottom",
                xytext=(0, 6),
                textcoords="offset points",
                fontsize=8,
            )
    for index, name in enumerate(scenarios):
        if name in REFERENCE_RATIOS:
            x = index + (len(pairs) / 2) * width
            ax.bar(
                x,
                REFERENCE_RATIOS[name],
                width,
                color=REFERENCE_COLOUR,
                label="reference v2/v1 (published)" if index == 0 else None,
            )
            ax.annotate(
                f"{REFERENCE_RATIOS[name]:.2f}x",
                (x, REFERENCE_RATIOS[name]),
                ha="center",
                va="bottom",
                xytext=(0, 2),
                textcoords="offset points",
                fontsize=8,
            )
    ratio_axis(ax, scenarios)
    finish(
        ax,
        ylabel="ratio of requests per second",
        legend="upper left",
        title="Paired ratios with their 95% CI, and the reference experiment's",
    )
    return to_svg(figure)


def latency_chart(results: dict[str, Any]) -> str:
    arms = list(results["apps"])
    figure, axes = scenario_axes(results)
    for ax, name in zip(axes, results["settings"]["scenarios"], strict=True):

        def percentile(arm: str, key: str, name: str = name) -> float | None:
            return results["apps"][arm]["scenarios"][name][key]

        grouped_bars(ax, arms, ["p50_ms", "p95_ms", "p99_ms"], percentile)
        ax.set_ylabel("ms")
    axes[0].legend(["p50", "p95", "p99"], fontsize=8)
    figure.suptitle("Latency percentiles over every counted request")
    return to_svg(figure)


def cpu_chart(results: dict[str, Any]) -> str:
    """CPU per request: the app's process tree, with the embedded PostgreSQL's on top."""
    arms = list(results["apps"])
    figure, axes = scenario_axes(results)
    for ax, name in zip(axes, results["settings"]["scenarios"], strict=True):
        for index, arm in enumerate(arms):
            figures = results["apps"][arm]["scenarios"][name]
            app, db = figures["app_cpu_ms_per_request"], figures["db_cpu_ms_per_request"]
            if app is None:
                continue
            ax.bar(index, app, color=colour(arm), label="app" if index == 0 else None)
            if db:
                ax.bar(
                    index,
                    db,
                    bottom=app,
                    color=REFERENCE_COLOUR,
                    label="PostgreSQL" if index == 0 else None,
                )
        ax.set_xticks(range(len(arms)), arms)
        ax.set_ylabel("CPU ms per request")
        ax.legend(fontsize=8)
    figure.suptitle("CPU per request: the app, and PostgreSQL on top (median over windows)")
    return to_svg(figure)


def memory_chart(results: dict[str, Any]) -> str:
    arms = list(results["apps"])
    figure, ax = plt.subplots(figsize=(1.6 * len(arms) + 2.5, 3.0))

    def rss(arm: str, moment: str) -> float | None:
        return results["apps"][arm]["memory"][f"{moment}_rss_mib"]

    grouped_bars(ax, arms, ["idle", "peak", "after"], rss)
    finish(
        ax,
        ylabel="RSS, MiB",
        legend="lower right",
        title="Memory of the app's process tree: idle, peak under load, after",
    )
    return to_svg(figure)


def startup_chart(results: dict[str, Any]) -> str | None:
    arms = [arm for arm in results["apps"] if results["apps"][arm].get("startup")]
    if not arms:
        return None
    figure, ax = plt.subplots(figsize=(6.5, 0.7 * len(arms) + 1.2))
    for index, arm in enumerate(arms):
        startup = results["apps"][arm]["startup"]
        for key, offset, alpha, label in (
            ("to_health_s", -0.18, 1.0, "to first /health"),
            ("import_s", 0.18, 0.5, "import of the app"),
        ):
            value = startup[key]
            ax.barh(
                index + offset,
                value,
                0.34,
                color=colour(arm),
                alpha=alpha,
                xerr=error_bars(value, startup[f"{key}_min"], startup[f"{key}_max"]),
                capsize=3,
                label=label if index == 0 else None,
            )
            ax.annotate(
                f"{value:.2f} s",
                (value, index + offset),
                va="center",
                xytext=(12, 0),
                textcoords="offset points",
                fontsize=8,
            )
    ax.set_yticks(range(len(arms)), arms)
    ax.invert_yaxis()
    ax.set_xlabel("seconds: median (min–max) over fresh starts")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("Start-up")
    return to_svg(figure)


def run_comparison_chart(runs: list[tuple[str, dict[str, Any]]]) -> str:
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
    figure, ax = plt.subplots(figsize=(3.4 * len(scenarios) + 1.5, 4.0))
    for position, (label, run_index) in enumerate(slots):
        name_of_run, results = runs[run_index]
        comparison = next((c for c in comparisons(results) if c.label == label), None)
        for index, name in enumerate(scenarios):
            if comparison is None or name not in results["settings"]["scenarios"]:
                continue  # this run lacks that ratio
            figures = comparison.figures(results, name)
            if not figures or figures["estimate"] is None:
                continue
            x = index + (position - (len(slots) - 1) / 2) * width
            ax.bar(
                x,
                figures["estimate"],
                width,
                color=colour(label.split("/")[0]),
                alpha=1.0 if run_index == 0 else 0.55,
                edgecolor="white",
                yerr=error_bars(figures["estimate"], figures["ci95_low"], figures["ci95_high"]),
                capsize=3,
                label=f"{label}, {name_of_run}" if index == 0 else None,
            )
    ratio_axis(ax, scenarios)
    finish(
        ax,
        ylabel="ratio of requests per second",
        legend="upper left",
        fontsize=7,
        title="Two runs: paired ratios with their 95% CI",
    )
    return to_svg(figure)
