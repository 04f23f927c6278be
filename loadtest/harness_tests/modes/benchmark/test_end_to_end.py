"""The real pipeline, very short, against all three arms: results.json, report.md, start-up
figures, no leftovers."""

import json
from pathlib import Path

import pytest

from harness_tests.runner import TINY_RUN, lab_processes, port_options, run_runner

ARMS = ("v1", "v2", "v2-latest")
SCENARIOS = ("read", "synthetic", "write")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, set[int]]:
    results_dir = tmp_path_factory.mktemp("results")
    before = lab_processes()
    result = run_runner(
        *TINY_RUN,
        "--repeats",
        "2",
        "--startup-samples",
        "2",
        "--results-dir",
        str(results_dir),
        *port_options(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    leftovers = lab_processes() - before
    return results_dir / "latest", result.stdout, leftovers


def test_run_writes_complete_results(finished_run) -> None:
    latest, _, _ = finished_run
    results = json.loads((latest / "results.json").read_text())
    assert (results["schema_version"], results["kind"]) == (4, "benchmark")
    assert results["settings"]["repeats"] == 2
    assert results["settings"]["arm_order"] == [list(ARMS), ["v2", "v2-latest", "v1"]]
    assert results["settings"]["database"]["kind"] == "embedded"
    versions = {arm: results["apps"][arm]["versions"] for arm in ARMS}
    assert versions["v1"]["pydantic"].startswith("1.10.")
    assert versions["v2"]["pydantic"] == versions["v2-latest"]["pydantic"]
    latest_fastapi = tuple(int(part) for part in versions["v2-latest"]["fastapi"].split("."))
    assert latest_fastapi >= (0, 130) and versions["v2"]["fastapi"] == "0.125.0"
    for app in ARMS:
        startup = results["apps"][app]["startup"]
        assert startup["samples"] == 2 and len(startup["to_health_s_samples"]) == 2
        # The import happens inside the start, so it is the smaller figure.
        assert 0 < startup["import_s"] < startup["to_health_s"] < 60
        memory = results["apps"][app]["memory"]
        assert 0 < memory["idle_rss_mib"] <= memory["peak_rss_mib"]
        assert 0 < memory["idle_uss_mib"] <= memory["idle_rss_mib"]
        for name in SCENARIOS:
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
    for name in SCENARIOS:
        ratios = [results["ratios_vs_baseline"][name][arm] for arm in ("v2", "v2-latest")]
        [fastapi_ratio] = results["ratios_between_arms"][name].values()
        for ratio in [*ratios, fastapi_ratio]:
            assert ratio["pairs"] == 12
            assert ratio["ci95_low"] <= ratio["estimate"] <= ratio["ci95_high"]
            assert [entry["pairs"] for entry in ratio["per_repeat"]] == [6, 6]
        assert set(results["ratios_between_arms"][name]) == {"v2-latest/v2"}
    windows = results["windows"]
    assert len(windows) == len(ARMS) * len(SCENARIOS) * 12
    for window in windows:
        assert window["requests"] > 0 and window["app_cpu_s"] > 0, window
        assert window["db_cpu_s"] is not None  # the embedded PostgreSQL's CPU is readable
    assert all(w["db_cpu_s"] > 0 for w in windows if w["scenario"] in ("read", "write"))
    for entry in results["load_generator"]["runs"]:
        assert set(entry["warmup_requests"]) == set(ARMS)
        assert min(entry["warmup_requests"].values()) > 0
        assert not any(entry["failures"].values())
        assert (latest / entry["files"]["json"]).exists()
        assert (latest / entry["files"]["html"]).exists()
    assert (latest / "runs" / "01" / "read.schedule.json").exists()
    assert results["load_generator"]["calibration"]["rps"] > 0


def test_run_writes_the_report_and_prints_the_table(finished_run) -> None:
    latest, stdout, _ = finished_run
    report = (latest / "report.md").read_text()
    assert "| metric | v1 · Pydantic 1.10." in report and " | v2-latest · Pydantic 2." in report
    for row in (
        "READ r/s",
        "READ synthetic ratio to v1 [95% CI]",
        "WRITE r/s",
        "READ synthetic v2-latest/v2 [95% CI]",
        "start-up to first /health, s",
        "memory peak, RSS (USS) MiB",
    ):
        assert f"| {row} |" in report
        assert row in stdout
    assert "| pydantic | 1.10." in report


def test_run_leaves_nothing_running(finished_run) -> None:
    _, _, leftovers = finished_run
    assert leftovers == set()
