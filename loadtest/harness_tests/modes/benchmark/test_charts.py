"""report.html's charts, checked where they are drawn: no legend covers a bar or a value, no
value sits on an error bar, and the memory chart shows its numbers and a few MiB between arms."""

from collections.abc import Callable
from typing import Any

import pytest
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from harness_tests.factories import build, make_life, make_run, three_arm_rounds
from loadtest.lab.memory import MemoryReading
from loadtest.lab.startup import StartupSamples
from loadtest.pipeline import charts
from loadtest.pipeline.settings import BenchmarkSettings


def noisy(rounds: list[dict[str, float]]) -> list[dict[str, float]]:
    """The machine's speed moving under one arm from round to round: intervals of ±10-20%,
    wide enough for an error bar to reach past a label placed at the bar's top."""
    swings = (0.8, 1.15, 0.9, 1.2, 1.0, 0.85, 1.1, 0.95, 1.05)
    return [
        {arm: rps * (swings[index % len(swings)] if arm != "v1" else 1.0) for arm, rps in r.items()}
        for index, r in enumerate(rounds)
    ]


def realistic_results(idle_rss: tuple[float, float, float] = (83.0, 87.0, 88.3)) -> dict:
    lives = []
    for arm, rss in zip(("v1", "v2", "v2-latest"), idle_rss, strict=True):
        life = make_life(arm)
        life.idle, life.peak = MemoryReading(rss, 64.0), MemoryReading(rss + 4.4, 68.0)
        life.after = MemoryReading(rss + 4.4, 66.0)
        lives.append(life)
    runs = [
        make_run(name, noisy(three_arm_rounds(*rps)))
        for name, rps in (
            ("read", (190.0, 350.0, 372.0)),
            ("synthetic", (305.0, 937.0, 1061.0)),
            ("write", (830.0, 818.0, 762.0)),
        )
    ]
    startup = {
        "v1": StartupSamples([1.27, 1.25, 1.32], [1.05, 1.03, 1.09]),
        "v2": StartupSamples([1.52, 1.50, 1.54], [1.34, 1.32, 1.37]),
        "v2-latest": StartupSamples([1.56, 1.53, 1.61], [1.38, 1.34, 1.43]),
    }
    return build(runs, BenchmarkSettings(pairs=9), lives=lives, startup=startup)


def drawn(figure: Figure) -> Any:
    figure.canvas.draw()
    return figure.canvas.get_renderer()  # type: ignore[attr-defined]


def overlapping(first: Bbox, second: Bbox) -> bool:
    return first.overlaps(second) and first.width > 0 and second.width > 0


FIGURES: dict[str, Callable[[dict], Figure | None]] = {
    "ratio": charts.ratio_figure,
    "throughput": charts.rps_figure,
    "latency": charts.latency_figure,
    "memory": charts.memory_figure,
    "start-up": charts.startup_figure,
    "two runs": lambda results: charts.run_comparison_figure([("a", results), ("b", results)]),
}
WITH_LEGEND = ("ratio", "latency", "memory", "start-up", "two runs")


@pytest.mark.parametrize("name", WITH_LEGEND)
def test_no_legend_covers_a_bar_a_dot_or_a_value(name: str) -> None:
    figure = FIGURES[name](realistic_results())
    assert figure is not None
    renderer = drawn(figure)
    legends = [ax.get_legend() for ax in figure.axes if ax.get_legend()]
    assert legends, "every chart here has a legend"
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in figure.axes:
            shapes = [patch.get_window_extent(renderer) for patch in ax.patches]
            shapes += [line.get_window_extent(renderer) for line in ax.lines]
            shapes += [text.get_window_extent(renderer) for text in ax.texts]
            covered = [shape for shape in shapes if overlapping(box, shape)]
            assert not covered, (name, box, covered[:3])


@pytest.mark.parametrize("name", ["ratio", "throughput", "start-up", "two runs"])
def test_no_value_sits_on_an_error_bar(name: str) -> None:
    figure = FIGURES[name](realistic_results())
    assert figure is not None
    renderer = drawn(figure)
    for ax in figure.axes:
        error_bars = []
        for collection in ax.collections:  # the bars' error lines
            transform = collection.get_transform()
            paths = collection.get_paths()
            error_bars += [path.transformed(transform).get_extents() for path in paths]
        caps = [line for line in ax.lines if line.get_marker() == "_"]
        error_bars += [line.get_window_extent(renderer) for line in caps]
        assert error_bars, name
        for text in ax.texts:
            label = text.get_window_extent(renderer)
            hit = [bar for bar in error_bars if label.overlaps(bar)]
            assert not hit, (name, text.get_text(), hit[:2])


def test_the_memory_chart_shows_its_numbers_and_five_mib_between_arms() -> None:
    figure = charts.memory_figure(realistic_results(idle_rss=(83.0, 88.0, 88.0)))
    drawn(figure)
    [ax] = figure.axes
    texts = {text.get_text() for text in ax.texts}
    assert {"83.0 MiB", "88.0 MiB", "92.4 MiB"} <= texts
    [v1, v2] = [line for line in ax.lines if line.get_label() in ("v1", "v2")]
    v1_x = ax.transData.transform((v1.get_xdata()[0], 0))[0]
    v2_x = ax.transData.transform((v2.get_xdata()[0], 0))[0]
    # 5 MiB apart is a visible gap, not a hairline on a bar 90 MiB long.
    assert v2_x - v1_x > 0.15 * ax.get_window_extent().width
