"""The real pipeline, very short, against both apps: results.json, report.md, no leftovers."""

import json
from pathlib import Path

import pytest

from tests.runner import TINY_RUN, free_port, lab_processes, run_runner


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, set[int]]:
    results_dir = tmp_path_factory.mktemp("results")
    before = lab_processes()
    result = run_runner(
        *TINY_RUN, "--repeats", "2", "--results-dir", str(results_dir),
        "--port-v1", str(free_port()), "--port-v2", str(free_port()),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    leftovers = lab_processes() - before
    return results_dir / "latest", result.stdout, leftovers


def test_run_writes_complete_results(finished_run) -> None:
    latest, _, _ = finished_run
    results = json.loads((latest / "results.json").read_text())
    assert results["settings"]["repeats"] == 2
    assert results["settings"]["order"] == [["v1", "v2"], ["v2", "v1"]]
    assert results["settings"]["database"]["kind"] == "embedded"
    assert results["apps"]["v1"]["versions"]["pydantic"].startswith("1.10.")
    assert results["apps"]["v2"]["versions"]["pydantic"].startswith("2.")
    for app in ("v1", "v2"):
        memory = results["apps"][app]["memory"]
        assert 0 < memory["idle_rss_mib"] <= memory["peak_rss_mib"]
        assert 0 < memory["idle_uss_mib"] <= memory["idle_rss_mib"]
        for name in ("read", "synthetic", "write"):
            scenario = results["apps"][app]["scenarios"][name]
            assert scenario["rps_median"] > 0, (app, name, scenario["flags"])
            assert scenario["requests"] > 0 and scenario["failures"] == 0
            # Spread and CPU flags depend on the machine's load; these must never appear.
            for word in ("failed", "verification", "mismatch"):
                assert not [flag for flag in scenario["flags"] if word in flag], scenario["flags"]
            assert len(scenario["runs"]) == 2
            for run in scenario["runs"]:
                assert (latest / run["files"]["json"]).exists()
                assert (latest / run["files"]["html"]).exists()
                assert (latest / run["files"]["csv_stats"]).exists()
        for run in results["apps"][app]["scenarios"]["write"]["runs"]:
            assert run["acknowledged_writes"] == run["new_rows"] > 0
    assert results["ratios_v2_over_v1"]["read"] > 0
    assert results["load_generator"]["calibration"]["rps"] > 0


def test_run_writes_the_report_and_prints_the_table(finished_run) -> None:
    latest, stdout, _ = finished_run
    report = (latest / "report.md").read_text()
    assert "| metric | Pydantic v1 | Pydantic v2 | v2/v1 |" in report
    for row in ("READ r/s", "READ synthetic r/s", "WRITE r/s", "memory peak, RSS (USS) MiB"):
        assert f"| {row} |" in report
        assert row in stdout
    assert "| pydantic | 1.10." in report


def test_run_leaves_nothing_running(finished_run) -> None:
    _, _, leftovers = finished_run
    assert leftovers == set()
