"""The sweep's reports from results.json alone: the summary, the tables, report.html with its
chart (self-contained, and drawn by a real browser offline), and results built from windows."""

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from harness_tests.browser import needs_chromium, pixels_of_arm, screenshot_pixels
from loadtest.lab.pinning import PinningPlan
from loadtest.load.cell_timetable import build_sweep_schedule, cell_timing
from loadtest.load.cells import CellProbe, cell_slot
from loadtest.load.locust_runs import LocustRun
from loadtest.load.paired import PairedSetup
from loadtest.load.slots import Slot
from loadtest.load.windows import WindowRecord
from loadtest.modes.registry import KINDS
from loadtest.modes.sweep.cells import Cell, cell_request
from loadtest.modes.sweep.report import gain_figure, print_report, summary_lines, write_reports
from loadtest.modes.sweep.results import build_sweep_results
from loadtest.modes.sweep.settings import SweepSettings
from loadtest.output.charts import plt
from loadtest.output.results_file import as_document, read_results, run_header

APPS = ("v1", "v2", "v2-latest")
# Per shape and size: each arm's app CPU per request (ms); r/s at saturation is its inverse.
COST_MS = {
    ("flat", 1): (1.0, 0.9, 0.9),
    ("flat", 1000): (40.0, 10.0, 6.0),
    ("nested", 1): (1.2, 1.0, 1.0),
    ("nested", 1000): (160.0, 40.0, 30.0),
    ("validate", 1000): (20.0, 9.0, 9.0),
}
ROUNDS = 6
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runs"  # runs of earlier versions


def sweep_results() -> dict:
    settings = SweepSettings(apps=APPS, pairs=ROUNDS, shapes=("flat", "nested", "validate"))
    cells = [Cell(shape, size) for shape, size in COST_MS]
    requests = {cell: cell_request(cell, settings.comments) for cell in cells}
    probes = {
        cell: {
            app: CellProbe(
                request_bytes=300 * cell.size if cell.shape == "validate" else 0,
                response_bytes=380 * cell.size * (2 if cell.shape == "nested" else 1),
                seconds=COST_MS[(cell.shape, cell.size)][index] / 1000,
                document=None,
            )
            for index, app in enumerate(APPS)
        }
        for cell in cells
    }
    timings = {
        cell: cell_timing(settings, {app: probe.seconds for app, probe in probes[cell].items()})
        for cell in cells
    }
    hosts = {cell_slot(cell, app): "http://x" for cell in cells for app in APPS}
    schedule = build_sweep_schedule(settings, cells, timings, hosts, start=0.0)
    records = []
    for window in schedule.measured():
        slot = Slot.parse(window.slot)
        app, cell_name = slot.arm, slot.variant
        cell = next(cell for cell in cells if cell.name == cell_name)
        cost_s = COST_MS[(cell.shape, cell.size)][APPS.index(app)] / 1000
        wobble = 1 + 0.02 * ((window.round or 0) % 3)  # the machine's speed, shared by a group
        requests_made = round(window.duration_s / (cost_s * wobble))
        records.append(
            WindowRecord(
                repeat=1,
                scenario="sweep",
                slot=window.slot,
                window=window.index,
                round=window.round or 0,
                started_at=window.measure_start,
                duration_s=window.duration_s,
                requests=requests_made,
                failures=0,
                histogram={max(1, round(cost_s * 2000)): requests_made},
                app_cpu_s=requests_made * cost_s * wobble,
                cpu_span_s=window.duration_s,
            )
        )
    header = run_header(
        datetime(2026, 11, 24, tzinfo=UTC),
        datetime(2026, 11, 24, 0, 10, tzinfo=UTC),
        {"cpu_model": "Test CPU"},
    )
    setup = PairedSetup(
        PinningPlan(True, (1,), (0,), "app on CPU 1"),
        None,
        {app: {"pydantic": "2.14.3", "fastapi": "0.125.0"} for app in APPS},
    )
    results = header | build_sweep_results(
        settings,
        setup,
        cells=cells,
        requests=requests,
        probes=probes,
        timings=timings,
        schedule=schedule,
        records=records,
        locust=LocustRun(requests=1, failures=0, elapsed_s=1.0, histogram={}, cpu_warnings=0),
    )
    return as_document("sweep", results)


def test_results_pair_each_cell_by_round_and_find_where_the_curve_crosses() -> None:
    results = sweep_results()
    assert results["comparisons"] == ["v2/v1", "v2-latest/v1", "v2-latest/v2"]
    flat_1000 = next(cell for cell in results["cells"] if cell["name"] == "flat-1000")
    gain = flat_1000["gains"]["v2/v1"]
    assert gain["by"] == "rps" and gain["pairs"] == ROUNDS
    assert 3.8 < gain["estimate"] < 4.2  # 40 ms against 10 ms a request (whole requests)
    assert 3.8 < flat_1000["ratios"]["v2/v1"]["cpu"]["estimate"] < 4.2
    assert 40.0 <= flat_1000["arms"]["v1"]["app_cpu_us_per_post"] <= 41.6  # 40 µs, wobbling
    crossing = results["crossings"]["v2/v1"]["flat"]["3x"]["estimate"]
    assert 380 < crossing < 380_000  # between the two sizes' answers, on a log axis


def test_the_terminal_report_answers_first(capsys: object) -> None:
    results = sweep_results()
    console = Console(width=250, record=True)
    print_report(results, console)
    text = console.export_text()
    assert text.startswith(summary_lines(results)[0])
    assert summary_lines(results)[0].startswith("flat: v2/v1 1.11x")
    assert "crosses 1.5x from about" in summary_lines(results)[0]
    assert "nested-1000" in text and "Ratios, paired by round" in text


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reports of the hand-made run, written once for the tests that read them."""
    folder = tmp_path_factory.mktemp("sweep-report")
    write_reports(folder, sweep_results())
    return folder


def test_report_html_is_one_self_contained_page(written: Path) -> None:
    html = (written / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") == 1
    assert "<script" not in html and "<link" not in html and "<img" not in html
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert "(their machine)" in html
    assert (written / "sweep.svg").read_text().startswith("<svg")
    assert "| flat-1000 |" in (written / "report.md").read_text()


@needs_chromium
def test_report_html_renders_its_charts_in_chromium_offline(written: Path, tmp_path: Path) -> None:
    pixels = screenshot_pixels(written / "report.html", tmp_path)
    # The gain lines (v2, v2-latest) and the CPU lines (every arm) are drawn.
    for arm in APPS:
        assert pixels_of_arm(pixels, arm) > 300, arm


def test_a_gain_read_from_cpu_is_drawn_hollow_over_its_error_bar() -> None:
    """The fixture run's bulk-1000: v2-latest was held back, so its gain over v1 is read from
    app CPU and its marker is hollow, drawn over the error bar's own filled marker."""
    results = read_results(FIXTURES / "sweep", KINDS)
    figure = gain_figure(results)
    bulk = next(ax for ax in figure.axes if ax.get_title() == "bulk")
    hollow = [line for line in bulk.get_lines() if line.get_markerfacecolor() == "white"]
    assert len(hollow) == 1
    filled = [line for line in bulk.get_lines() if line not in hollow and line.get_marker()]
    assert hollow[0].get_zorder() > max(line.get_zorder() for line in filled)
    plt.close(figure)
