"""The report's charts, drawn with matplotlib from results.json alone, as SVG text.

SVG with the text drawn as paths needs no font and no script: inlined in report.html, the
charts render offline, opened from disk, in any browser.
"""

import io
import re
from collections.abc import Callable
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: draw to files only

import matplotlib.pyplot as plt  # noqa: E402 - after choosing the backend
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from loadtest.scenarios import SCENARIOS  # noqa: E402
from loadtest.stats import median_with_ci  # noqa: E402

ARM_COLOURS = {"v1": "#4c72b0", "v2": "#dd8452", "v2-latest": "#55a868"}
OTHER_COLOUR = "#8172b3"
REFERENCE_COLOUR = "#bbbbbb"
# The reference experiment's published v2/v1 ratios (FastAPI 0.98 + Pydantic 1 against
# FastAPI 0.100-beta + Pydantic 2, ab -n 1000 -c 10, its own machine): ../shared/seeds.
REFERENCE_RATIOS = {"read": 2.92, "synthetic": 6.97, "write": 1.03}


def colour(arm: str) -> str:
    return ARM_COLOURS.get(arm, OTHER_COLOUR)


def to_svg(figure: Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    text = buffer.getvalue()
    text = text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE: it is inlined
    return re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.DOTALL)  # RDF: no use here


def scenario_axes(results: dict[str, Any], height: float = 3.0) -> tuple[Figure, list[Axes]]:
    scenarios = results["settings"]["scenarios"]
    figure, axes = plt.subplots(1, len(scenarios), figsize=(3.6 * len(scenarios), height),
                                squeeze=False, layout="constrained")  # fmt: skip
    for ax, name in zip(axes[0], scenarios, strict=True):
        ax.set_title(SCENARIOS[name].label)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    return figure, list(axes[0])


def finish(ax: Axes, *, ylabel: str, title: str, legend: str, fontsize: int = 8) -> None:
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(fontsize=fontsize, loc=legend)
    ax.set_title(title)


def ratio_axis(ax: Axes, scenarios: list[str]) -> None:
    """Scenarios along x, and the line at 1 (no change) across."""
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(scenarios)), [SCENARIOS[name].label for name in scenarios])


def error_bars(value: float, low: float | None, high: float | None) -> list[list[float]]:
    if low is None or high is None:
        return [[0.0], [0.0]]
    return [[value - low], [high - value]]


def rps_chart(results: dict[str, Any]) -> str:
    """Median r/s of each arm's windows with the 95% CI of that median."""
    arms = list(results["apps"])
    figure, axes = scenario_axes(results)
    for ax, name in zip(axes, results["settings"]["scenarios"], strict=True):
        for index, arm in enumerate(arms):
            values = [w["rps"] for w in results["windows"]
                      if w["arm"] == arm and w["scenario"] == name]  # fmt: skip
            median, low, high = median_with_ci(values)
            if median is None:
                continue
            ax.bar(index, median, color=colour(arm), yerr=error_bars(median, low, high),
                   capsize=4)  # fmt: skip
            ax.annotate(f"{median:,.0f}", (index, median), ha="center", va="bottom",
                        xytext=(0, 8), textcoords="offset points", fontsize=8)  # fmt: skip
        ax.set_xticks(range(len(arms)), arms)
        ax.set_ylabel("requests per second")
    figure.suptitle("Throughput: median r/s of the windows, with its 95% CI")
    return to_svg(figure)


def comparisons(results: dict[str, Any]) -> list[tuple[str, Callable[[str], dict | None]]]:
    """(label, scenario -> ratio figures) for every ratio the run has."""
    found = []
    baseline = results["settings"]["baseline"]
    for arm in results["apps"]:
        if baseline and arm != baseline:
            found.append(
                (
                    f"{arm}/{baseline}",
                    lambda name, arm=arm: results["ratios_vs_baseline"][name].get(arm),
                )
            )
    keys = {key for ratios in results.get("ratios_between_arms", {}).values() for key in ratios}
    for key in sorted(keys):
        found.append((key, lambda name, key=key: results["ratios_between_arms"][name].get(key)))
    return found  # fmt: skip


def ratio_chart(results: dict[str, Any]) -> str:
    """The main chart: every ratio with its 95% CI, beside the reference experiment's."""
    pairs = comparisons(results)
    scenarios = results["settings"]["scenarios"]
    width = 0.8 / (len(pairs) + 1)
    figure, ax = plt.subplots(figsize=(3.2 * len(scenarios) + 1.5, 4.0))
    for position, (label, figures_of) in enumerate(pairs):
        arm = label.split("/")[0]
        reference = label.split("/")[1]
        for index, name in enumerate(scenarios):
            figures = figures_of(name)
            if not figures or figures["ratio"] is None:
                continue
            x = index + (position - len(pairs) / 2) * width
            ax.bar(x, figures["ratio"], width, color=colour(arm),
                   hatch="//" if reference != results["settings"]["baseline"] else None,
                   edgecolor="white", label=label if index == 0 else None,
                   yerr=error_bars(figures["ratio"], figures["ci95_low"], figures["ci95_high"]),
                   capsize=3)  # fmt: skip
            ax.annotate(f"{figures['ratio']:.2f}x", (x, figures["ratio"]), ha="center",
                        va="bottom", xytext=(0, 6), textcoords="offset points",
                        fontsize=8)  # fmt: skip
    for index, name in enumerate(scenarios):
        if name in REFERENCE_RATIOS:
            x = index + (len(pairs) / 2) * width
            ax.bar(x, REFERENCE_RATIOS[name], width, color=REFERENCE_COLOUR,
                   label="reference v2/v1 (published)" if index == 0 else None)  # fmt: skip
            ax.annotate(f"{REFERENCE_RATIOS[name]:.2f}x", (x, REFERENCE_RATIOS[name]),
                        ha="center", va="bottom", xytext=(0, 2), textcoords="offset points",
                        fontsize=8)  # fmt: skip
    ratio_axis(ax, scenarios)
    finish(ax, ylabel="ratio of requests per second", legend="upper left",
           title="Paired ratios with their 95% CI, and the reference experiment's")  # fmt: skip
    return to_svg(figure)


def grouped_bars(
    ax: Axes, arms: list[str], groups: list[str], value: Callable[[str, str], float | None]
) -> None:
    """One group of bars per arm, one bar per group entry (lighter for later entries)."""
    width = 0.8 / len(groups)
    for index, arm in enumerate(arms):
        for position, group in enumerate(groups):
            height = value(arm, group)
            if height is None:
                continue
            ax.bar(index + (position - (len(groups) - 1) / 2) * width, height, width,
                   color=colour(arm), alpha=1.0 - 0.25 * position, edgecolor="white",
                   label=group if index == 0 else None)  # fmt: skip
    ax.set_xticks(range(len(arms)), arms)


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
                ax.bar(index, db, bottom=app, color=REFERENCE_COLOUR,
                       label="PostgreSQL" if index == 0 else None)  # fmt: skip
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
    finish(ax, ylabel="RSS, MiB", legend="lower right",
           title="Memory of the app's process tree: idle, peak under load, after")  # fmt: skip
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
            ax.barh(index + offset, value, 0.34, color=colour(arm), alpha=alpha,
                    xerr=error_bars(value, startup[f"{key}_min"], startup[f"{key}_max"]),
                    capsize=3, label=label if index == 0 else None)  # fmt: skip
            ax.annotate(f"{value:.2f} s", (value, index + offset), va="center",
                        xytext=(12, 0), textcoords="offset points", fontsize=8)  # fmt: skip
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
    labels = list(dict.fromkeys(
        label for _, results in runs for label, _ in comparisons(results)))  # fmt: skip
    slots = [(label, run_index) for label in labels for run_index in range(len(runs))]
    width = 0.8 / max(len(slots), 1)
    figure, ax = plt.subplots(figsize=(3.4 * len(scenarios) + 1.5, 4.0))
    for position, (label, run_index) in enumerate(slots):
        name_of_run, results = runs[run_index]
        figures_of = dict(comparisons(results)).get(label)
        for index, name in enumerate(scenarios):
            if figures_of is None or name not in results["settings"]["scenarios"]:
                continue  # this run lacks that ratio
            figures = figures_of(name)
            if not figures or figures["ratio"] is None:
                continue
            x = index + (position - (len(slots) - 1) / 2) * width
            ax.bar(x, figures["ratio"], width, color=colour(label.split("/")[0]),
                   alpha=1.0 if run_index == 0 else 0.55, edgecolor="white",
                   yerr=error_bars(figures["ratio"], figures["ci95_low"], figures["ci95_high"]),
                   capsize=3, label=f"{label}, {name_of_run}" if index == 0 else None)  # fmt: skip
    ratio_axis(ax, scenarios)
    finish(ax, ylabel="ratio of requests per second", legend="upper left", fontsize=7,
           title="Two runs: paired ratios with their 95% CI")  # fmt: skip
    return to_svg(figure)
