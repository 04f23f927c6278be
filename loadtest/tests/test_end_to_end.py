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
    assert results["schema_version"] == 2
    assert results["settings"]["repeats"] == 2
    assert results["settings"]["arm_order"] == [["v1", "v2"], ["v2", "v1"]]
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
            assert scenario["windows"] == 12  # 6 pairs x 2 repeats
            assert scenario["requests"] > 0 and scenario["failures"] == 0
            assert scenario["app_cpu_ms_per_request"] > 0
            # CI and saturation flags depend on the machine's load; these must never appear.
            for word in ("failed", "verification", "mismatch"):
                assert not [flag for flag in scenario["flags"] if word in flag], scenario["flags"]
        write = results["apps"][app]["scenarios"]["write"]
        assert write["acknowledged_writes"] == write["new_rows"] > 0
    for name in ("read", "synthetic", "write"):
        ratio = results["ratios_vs_baseline"][name]["v2"]
        assert ratio["pairs"] == 12 and ratio["ci95_low"] <= ratio["ratio"] <= ratio["ci95_high"]
        assert [entry["pairs"] for entry in ratio["per_repeat"]] == [6, 6]
    windows = results["windows"]
    assert len(windows) == 2 * 3 * 12
    for window in windows:
        assert window["requests"] > 0 and window["app_cpu_s"] > 0, window
        assert window["db_cpu_s"] is not None  # the embedded PostgreSQL's CPU is readable
    assert all(w["db_cpu_s"] > 0 for w in windows if w["scenario"] in ("read", "write"))
    for entry in results["load_generator"]["runs"]:
        assert set(entry["warmup_requests"]) == {"v1", "v2"}
        assert min(entry["warmup_requests"].values()) > 0
        assert not any(entry["failures"].values())
        assert (latest / entry["files"]["json"]).exists()
        assert (latest / entry["files"]["html"]).exists()
    assert (latest / "runs" / "01" / "read.schedule.json").exists()
    assert results["load_generator"]["calibration"]["rps"] > 0


def test_run_writes_the_report_and_prints_the_table(finished_run) -> None:
    latest, stdout, _ = finished_run
    report = (latest / "report.md").read_text()
    assert "| metric | Pydantic v1 | Pydantic v2 |" in report
    for row in ("READ r/s", "READ synthetic ratio to v1 [95% CI]", "WRITE r/s",
                "memory peak, RSS (USS) MiB"):  # fmt: skip
        assert f"| {row} |" in report
        assert row in stdout
    assert "| pydantic | 1.10." in report


def test_run_leaves_nothing_running(finished_run) -> None:
    _, _, leftovers = finished_run
    assert leftovers == set()
