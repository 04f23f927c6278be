"""The versions report from results.json alone, in-process: a --python run (its windows left out:
the report reads none) and a run from before the generated app."""

import json
from pathlib import Path
from typing import Any

from loadtest.modes.versions.report import write_reports

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def report_of(tmp_path: Path, results: dict[str, Any]) -> str:
    (tmp_path / "results.json").write_text(json.dumps(results))
    written = write_reports(tmp_path, results)
    assert {path.name for path in written} == {"report.md", "report.html", "versions.svg"}
    return (tmp_path / "report.md").read_text()


def test_a_python_run_gives_each_v2_over_the_v1_on_its_own_python(tmp_path: Path) -> None:
    results = json.loads((FIXTURES / "versions_python" / "results.json").read_text())
    assert "v1" not in results["arms"]
    report = report_of(tmp_path, results)
    # The v2 step and v1's own step between the same two Pythons, each a row.
    assert "| Python 3.11.7 → 3.12.1 |" in report and "| Python 3.11.7 → 3.12.1, v1 |" in report
    for python in ("3.11.7", "3.12.1", "3.13.0"):
        v1_row = next(
            line for line in report.splitlines() if f"@py{python[:4]} | {python} |" in line
        )
        assert "| 1.10.27 |" in v1_row and "| baseline |" in v1_row
    level = results["steps"][0]["scenarios"]["read"]["to_over_v1"]["estimate"]
    v2_row = next(line for line in report.splitlines() if line.startswith("| v2@py3.12 |"))
    assert f"{level:.2f}x" in v2_row  # over v1@py3.12, in the step that ends on it


def test_a_run_from_before_the_generated_app_is_reported_without_it(tmp_path: Path) -> None:
    results = json.loads((FIXTURES / "runs" / "versions" / "results.json").read_text())
    for arm in results["arms"].values():
        del arm["generated"]
    for step in results["steps"]:
        del step["generated"]
    report = report_of(tmp_path, results)
    assert "500 models" not in report and "| v2@2.11 |" in report
