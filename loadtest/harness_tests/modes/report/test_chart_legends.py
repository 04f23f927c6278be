"""Every legend of every chart, drawn by Chromium, shows each arm it names in that arm's own
colour (not one arm's shades for all), in text at least as large as the axis labels."""

from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure

from harness_tests.browser import needs_chromium, pixels_of_arm, screenshot_pixels
from loadtest.modes.latency.report import latency_figure
from loadtest.modes.registry import KINDS
from loadtest.modes.scale.report import growth_figure
from loadtest.modes.sweep.report import gain_figure
from loadtest.modes.workers.report import workers_figure
from loadtest.output.charts import plt
from loadtest.output.results_file import read_results
from loadtest.pipeline import charts as benchmark_charts

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runs"
BLOCK_PX = 420  # each legend gets a block of the page this tall


def fixture(kind: str) -> dict[str, Any]:
    return read_results(FIXTURES / kind, KINDS)


def every_arm(results: dict[str, Any]) -> set[str]:
    return set(results["apps"])


# (name, figure, the arms it must show): a ratio over v1 shows its own arm, not v1's.
CHARTS: list[tuple[str, Callable[[], Figure], set[str]]] = [
    (
        "benchmark ratios",
        lambda: benchmark_charts.ratio_figure(fixture("benchmark")),
        {"v2", "v2-latest"},
    ),
    (
        "benchmark latency",
        lambda: benchmark_charts.latency_figure(fixture("benchmark")),
        every_arm(fixture("benchmark")),
    ),
    (
        "benchmark CPU",
        lambda: benchmark_charts.cpu_figure(fixture("benchmark")),
        every_arm(fixture("benchmark")),
    ),
    (
        "benchmark start-up",
        lambda: benchmark_charts.startup_figure(fixture("benchmark")),
        every_arm(fixture("benchmark")),
    ),
    (
        "benchmark memory",
        lambda: benchmark_charts.memory_figure(fixture("benchmark")),
        every_arm(fixture("benchmark")),
    ),
    (
        "compare",
        lambda: benchmark_charts.run_comparison_figure(
            [("first", fixture("benchmark")), ("second", fixture("benchmark"))]
        ),
        {"v2", "v2-latest"},
    ),
    ("sweep gains", lambda: sweep_legend(0), {"v2", "v2-latest"}),
    ("sweep CPU per post", lambda: sweep_legend(1), {"v1", "v2", "v2-latest"}),
    (
        "scale",
        lambda: growth_figure(fixture("scale")["scale"], "to_health_s"),
        {"v1", "v2", "v2-latest"},
    ),
    ("workers", lambda: workers_figure(fixture("workers")), {"v1", "v2"}),
    ("latency", lambda: latency_figure(fixture("latency")), {"v1", "v2"}),
]


def sweep_legend(row: int) -> Figure:
    """The sweep's small multiples keep one legend a row: only that row's."""
    figure = gain_figure(fixture("sweep"))
    columns = len(figure.axes) // 2  # two rows of panels, a column per shape
    for ax in figure.axes:
        legend = ax.get_legend()
        if legend is not None and ax not in figure.axes[row * columns : (row + 1) * columns]:
            legend.remove()
    return figure


def legend_svgs(figure: Figure) -> list[str]:
    """Each legend of the figure cut out of it, as SVG."""
    figure.canvas.draw()
    found = []
    for ax in figure.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        axis_label = ax.yaxis.label.get_fontsize()
        for text in legend.get_texts():
            assert text.get_fontsize() >= axis_label, text.get_text()
        box = legend.get_window_extent().transformed(figure.dpi_scale_trans.inverted())
        buffer = StringIO()
        figure.savefig(buffer, format="svg", bbox_inches=box.padded(0.05))
        text = buffer.getvalue()
        found.append(text[text.index("<svg") :])
    plt.close(figure)
    return found


@pytest.fixture(scope="module")
def drawn_legends(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    """Every chart's legends on one page, drawn by one Chromium: each chart's blocks of its
    pixels, by chart name (a Chromium a chart cost two to three seconds of CPU each)."""
    folder = tmp_path_factory.mktemp("legends")
    legends = {name: legend_svgs(draw()) for name, draw, _ in CHARTS}
    svgs = [svg for found in legends.values() for svg in found]
    blocks = "".join(
        f'<div style="height:{BLOCK_PX}px;overflow:hidden">{svg}</div>' for svg in svgs
    )
    page = folder / "legends.html"
    page.write_text(f'<!DOCTYPE html><html><body style="margin:0">{blocks}</body></html>')
    pixels = screenshot_pixels(page, folder, height=BLOCK_PX * len(svgs))
    drawn: dict[str, list[Any]] = {}
    first = 0
    for name, found in legends.items():
        drawn[name] = [
            pixels[(first + number) * BLOCK_PX : (first + number + 1) * BLOCK_PX]
            for number in range(len(found))
        ]
        first += len(found)
    return drawn


@needs_chromium
@pytest.mark.parametrize(
    ("name", "arms"),
    [(name, arms) for name, _, arms in CHARTS],
    ids=[name for name, _, _ in CHARTS],
)
def test_every_legend_shows_every_arm_in_its_colour(
    name: str, arms: set[str], drawn_legends: dict[str, list[Any]]
) -> None:
    blocks = drawn_legends[name]
    assert blocks, f"{name}: no legend"
    for number, block in enumerate(blocks):
        counts = {arm: pixels_of_arm(block, arm) for arm in sorted(arms)}
        assert all(count > 0 for count in counts.values()), (name, number, counts)
