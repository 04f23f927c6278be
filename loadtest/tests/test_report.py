"""The table and report.md."""

from pathlib import Path

from loadtest.report import table_rows, write_report
from tests.factories import make_cell
from tests.test_results import build, steady_cells


def test_table_has_a_row_per_metric_and_a_ratio_column() -> None:
    header, rows = table_rows(build(steady_cells()))
    assert header == ["metric", "Pydantic v1", "Pydantic v2", "v2/v1"]
    by_metric = {row[0]: row[1:] for row in rows}
    assert by_metric["READ r/s"] == ["101.0 (100.0–102.0)", "301.0 (300.0–302.0)", "2.98x"]
    assert "WRITE p50 / p95 / p99 ms" in by_metric
    assert by_metric["memory idle, RSS (USS) MiB"][0] == "71.0 (60.0)"


def test_flagged_cells_are_marked(tmp_path: Path) -> None:
    from loadtest.settings import BenchmarkSettings

    cells = [make_cell("v1", 0, {"read": 100.0}, failures=5), make_cell("v2", 0, {"read": 300.0})]
    results = build(cells, BenchmarkSettings(repeats=1, scenarios=("read",)))
    _, rows = table_rows(results)
    assert rows[0][1].endswith("⚠") and not rows[0][2].endswith("⚠")
    report = write_report(tmp_path, results).read_text()
    assert "app_v1 read: 5 of 1000 requests failed" in report


def test_report_lists_settings_versions_and_headroom(tmp_path: Path) -> None:
    report = write_report(tmp_path, build(steady_cells())).read_text()
    assert "| READ r/s | 101.0 (100.0–102.0) | 301.0 (300.0–302.0) | 2.98x |" in report
    assert "| pydantic | 1.10.27 | 2.14.3 |" in report
    assert "order v1 v2 / v2 v1 / v1 v2" in report
    assert "Load generator headroom: locust drove 6,000.0 r/s" in report
    assert "## Flags\n\n- none" in report


def test_report_names_the_host(tmp_path: Path) -> None:
    report = write_report(tmp_path, build(steady_cells())).read_text()
    assert "Test CPU, 2 cores (2 available), 8.0 GiB, Linux test, Python 3.11.7." in report
