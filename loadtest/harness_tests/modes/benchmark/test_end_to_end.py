"""The real pipeline, very short, against all three arms in every scenario, one repeat (a second
repeat, and its order of the arms, are test_options.py's): results.json, report.md, start-up
figures, no leftovers."""

import copy
import json
import subprocess
import sys
from pathlib import Path
from statistics import median
from typing import Any

import pytest

from harness_tests.pairing import empty_windows, pairs_expected
from harness_tests.runner import TINY_RUN, lab_processes, port_options, run_runner
from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.modes.benchmark.completeness import gaps
from loadtest.output.results_file import SCHEMA_VERSION

ARMS = ("v1", "v2", "v2-latest")
SCENARIOS = ("read", "synthetic", "write")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, set[int]]:
    results_dir = tmp_path_factory.mktemp("results")
    before = lab_processes()
    result = run_runner(
        *TINY_RUN,
        "--repeats",
        "1",
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
    assert (results["schema_version"], results["kind"]) == (SCHEMA_VERSION, "benchmark")
    assert results["settings"]["repeats"] == 1
    assert results["settings"]["arm_order"] == [list(ARMS)]
    assert results["settings"]["database"]["kind"] == "embedded"
    assert "timetable" not in results  # no scenario of the default run declares one
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
            own = [w for w in results["windows"] if w["arm"] == app and w["scenario"] == name]
            assert scenario["rps_median"] == pytest.approx(median(w["rps"] for w in own), abs=0.01)
            assert scenario["windows"] == len(own) == 6  # 6 pairs
            assert scenario["requests"] > 0 and scenario["failures"] == 0
            assert scenario["app_cpu_ms_per_request"] > 0
            # CI and saturation flags depend on the machine's load; these must never appear.
            for word in ("failed", "verification", "mismatch"):
                assert not [flag for flag in scenario["flags"] if word in flag], scenario["flags"]
        write = results["apps"][app]["scenarios"]["write"]
        assert write["acknowledged_writes"] == write["new_rows"] > 0
        # Counted at the arm's engine: one SELECT a page, one INSERT a post, none in memory.
        assert {
            name: results["apps"][app]["scenarios"][name]["statements_per_request"]
            for name in SCENARIOS
        } == {"read": 1.0, "synthetic": None, "write": 1.0}
    windows = results["windows"]
    for name in SCENARIOS:
        [fastapi_ratio] = results["ratios_between_arms"][name].values()
        pairs = [
            (results["ratios_vs_baseline"][name]["v2"], "v2", "v1"),
            (results["ratios_vs_baseline"][name]["v2-latest"], "v2-latest", "v1"),
            (fastapi_ratio, "v2-latest", "v2"),
        ]
        for ratio, arm, reference in pairs:
            # Every round, but one where the machine stalled either window empty.
            assert ratio["pairs"] == pairs_expected(windows, arm, reference, scenario=name)
            assert [entry["pairs"] for entry in ratio["per_repeat"]] == [ratio["pairs"]]
            if ratio["ci95_low"] is not None:
                assert ratio["ci95_low"] <= ratio["estimate"] <= ratio["ci95_high"]
        assert set(results["ratios_between_arms"][name]) == {"v2-latest/v2"}
    assert len(windows) == len(ARMS) * len(SCENARIOS) * 6
    for window in windows:
        # Both read at every window's edges (a window stalled empty has CPU figures too).
        assert window["app_cpu_s"] is not None and window["db_cpu_s"] is not None, window
    for name in ("read", "write"):  # the scenarios that ask the database
        assert sum(w["db_cpu_s"] for w in windows if w["scenario"] == name) > 0
    for window in empty_windows(windows):  # said where it happened
        flags = results["apps"][window["arm"]]["scenarios"][window["scenario"]]["flags"]
        assert any("served no request (their pairs are left out)" in flag for flag in flags)
    for entry in results["load_generator"]["runs"]:
        assert set(entry["warmup_requests"]) == set(ARMS)
        assert sum(entry["warmup_requests"].values()) > 0  # 3 s of warm-up, 1 s an arm
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


@pytest.fixture
def results(finished_run: tuple[Path, str, set[int]]) -> dict[str, Any]:
    latest, _, _ = finished_run
    return json.loads((latest / "results.json").read_text())


# What docker/smoke.sh asks of a results.json (loadtest.modes.benchmark.completeness): asked of
# this real run, and of a recorded complete one (fixtures/runs/benchmark/, a --quick run),
# each kind of gap named.
RECORDED_RUN = Path(__file__).resolve().parents[2] / "fixtures" / "runs" / "benchmark"


@pytest.fixture
def recorded() -> dict[str, Any]:
    return json.loads((RECORDED_RUN / "results.json").read_text())


def check_completeness(results_file: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "loadtest.modes.benchmark.completeness", str(results_file)]
    return subprocess.run(command, capture_output=True, text=True)


def test_the_completeness_check_reads_a_real_run(finished_run, results) -> None:
    """Complete, but where the machine stalled a ratio's windows, beside other tests, to fewer
    pairs than an interval needs (six pairs of 0.2 s counted spans may lose one; a window that
    served nothing drops its pair). Each such ratio named, and nothing else."""
    latest, _, _ = finished_run

    def stalled(ratio: dict[str, Any]) -> bool:
        return ratio["pairs"] < MIN_PAIRS_FOR_CI or not ratio["ci95_low"]

    short = [
        f"{arm} · {name}: no ratio to v1 with its interval"
        for name, ratios in results["ratios_vs_baseline"].items()
        for arm, ratio in ratios.items()
        if stalled(ratio)
    ] + [
        f"{between} · {name}: no ratio with its interval"
        for name, ratios in results["ratios_between_arms"].items()
        for between, ratio in ratios.items()
        if stalled(ratio)
    ]
    assert sorted(gaps(results)) == sorted(short)
    answer = check_completeness(latest / "results.json")
    if short:
        assert answer.returncode == 1
        assert sorted(answer.stderr.splitlines()) == sorted(f"incomplete: {gap}" for gap in short)
    else:
        assert answer.returncode == 0, answer.stderr
        assert answer.stdout.startswith("complete: 3 arms verified in every scenario, 6 ratios")


def test_a_recorded_complete_run_is_complete() -> None:
    answer = check_completeness(RECORDED_RUN / "results.json")
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.startswith("complete: 3 arms verified in every scenario, 6 ratios")


def test_a_local_run_is_not_a_docker_one(results, recorded) -> None:
    docker_gaps = [
        "the run was not against the compose stack (settings.docker is not set)",
        "the containers' interpreter build was not recorded (host.interpreter)",
    ]
    assert gaps(recorded, docker=True) == docker_gaps
    assert gaps(results, docker=True)[:2] == docker_gaps
    assert results["host"]["interpreter"]["where"] == "local"


def test_a_docker_run_reads_its_containers_cpu_where_it_reads_their_processes(recorded) -> None:
    as_docker = copy.deepcopy(recorded)
    as_docker["settings"] |= {"docker": True, "memory_source": "process tree"}
    as_docker["settings"]["database"]["kind"] = "docker"
    as_docker["host"]["interpreter"] = {"where": "container (app_v1's image)"}
    assert gaps(as_docker, docker=True) == []
    as_docker["apps"]["v2"]["scenarios"]["read"]["app_cpu_ms_per_request"] = None
    assert gaps(as_docker, docker=True) == ["v2 · read: the container's CPU was not read"]
    as_docker["settings"]["memory_source"] = "docker stats"  # not root: no CPU to read
    assert gaps(as_docker, docker=True) == []


def test_each_gap_is_named(recorded) -> None:
    broken = copy.deepcopy(recorded)
    broken["apps"]["v2"]["memory"]["peak_rss_mib"] = None
    broken["apps"]["v1"]["scenarios"]["read"]["flags"].append(
        "verification failed (repeat 1): GET /posts answered 500"
    )
    broken["apps"]["v2-latest"]["scenarios"]["write"]["new_rows"] -= 1
    del broken["ratios_vs_baseline"]["synthetic"]["v2"]["ci95_low"]
    broken["ratios_between_arms"]["read"]["v2-latest/v2"]["ci95_high"] = 0.1
    found = gaps(broken)
    assert found[0] == "v1 · read: verification failed (repeat 1): GET /posts answered 500"
    assert "v2 · synthetic: no ratio to v1 with its interval" in found
    assert "v2: memory not read (peak_rss_mib)" in found
    assert any(line.startswith("v2-latest · write: ") and "stored" in line for line in found)
    assert "v2-latest/v2 · read: no ratio with its interval" in found
    assert len(found) == 5


def test_an_unreadable_file_is_one_line_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text("{not json")
    answer = check_completeness(tmp_path / "results.json")
    assert answer.returncode == 1
    assert answer.stderr.count("\n") == 1 and answer.stderr.startswith("error: cannot read")


@pytest.mark.parametrize("text", ["[1, 2]", '{"kind": "benchmark"}'])
def test_a_partial_results_file_is_one_line_and_exit_1(tmp_path: Path, text: str) -> None:
    (tmp_path / "results.json").write_text(text)
    answer = check_completeness(tmp_path / "results.json")
    assert answer.returncode == 1
    assert answer.stderr.count("\n") == 1 and "is not a whole results.json" in answer.stderr
