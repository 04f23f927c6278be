"""The benchmark's other options, end to end: --docker without an engine, locust's
distributed mode, the wrk cross-check, and the one-line refusals."""

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness_tests.pairing import empty_windows, pairs_expected
from harness_tests.runner import (
    TINY_RUN,
    lab_processes,
    only_run,
    port_options,
    run_in_process,
    run_runner,
)


@pytest.mark.skipif(shutil.which("docker") is None, reason="no docker command to point away")
def test_docker_mode_without_an_engine_is_one_line_and_writes_nothing(tmp_path) -> None:
    """DOCKER_HOST names a socket nobody listens on: no engine answers, even where one runs."""
    result = run_in_process(
        "--docker",
        "--quick",
        "--results-dir",
        str(tmp_path / "results"),
        DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock",
    )
    assert result.returncode == 1
    assert result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("./test.sh: error: --docker")
    assert "plain ./test.sh needs no Docker" in line
    assert not (tmp_path / "results").exists()


def test_docker_mode_without_docker_at_all_is_one_line(tmp_path) -> None:
    """No docker command on PATH: the same one line, naming what is missing."""
    result = run_in_process(
        "--docker", "--quick", "--results-dir", str(tmp_path / "results"), PATH=str(tmp_path)
    )
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line == (
        "./test.sh: error: --docker needs the docker command, which is not installed "
        "(plain ./test.sh needs no Docker)"
    )
    assert not (tmp_path / "results").exists()


def wrk_available_or_installable() -> bool:
    return shutil.which("wrk") is not None or (
        shutil.which("apt-get") is not None and os.geteuid() == 0
    )


@pytest.fixture(scope="module")
def distributed_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[str, Any], Path, subprocess.CompletedProcess[str], set[int]]:
    """One short run with two locust processes (a master and two workers), --fit, and the wrk
    cross-check where wrk is (or can be) installed, on READ alone, in two repeats: options
    whose code paths a single run exercises together (the end-to-end run covers the
    calibration and every scenario, in one repeat). --users and --window are TINY_RUN's, so
    --fit probes and keeps them (the settle alone is fitted) and the timing stays short."""
    results_dir = tmp_path_factory.mktemp("distributed")
    cross_check = ["--cross-check"] if wrk_available_or_installable() else []
    before = lab_processes()
    result = run_runner(
        *TINY_RUN,
        "--repeats",
        "2",
        "--scenarios",
        "read",
        "--load-processes",
        "2",
        "--fit",
        *cross_check,
        "--no-calibration",
        "--results-dir",
        str(results_dir),
        "--apps",
        "v1,v2",
        *port_options(),
    )
    leftovers = lab_processes() - before
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = only_run(results_dir)
    return json.loads((run_dir / "results.json").read_text()), run_dir, result, leftovers


def test_distributed_locust_gives_the_same_complete_results(distributed_run) -> None:
    results, run_dir, result, leftovers = distributed_run
    assert results["settings"]["load_processes"] == 2
    assert results["load_generator"]["load_processes"] == 2
    # The second repeat starts the arms afresh, the other one first.
    assert results["settings"]["arm_order"] == [["v1", "v2"], ["v2", "v1"]]
    for app in ("v1", "v2"):
        [(name, scenario)] = results["apps"][app]["scenarios"].items()
        assert name == "read" and scenario["failures"] == 0, (app, scenario)
        assert scenario["requests"] > 0 and scenario["windows"] == 12  # 6 pairs x 2 repeats
    assert list(results["ratios_vs_baseline"]) == ["read"]
    # Every round, but one where the machine stalled either window empty (said in the flags).
    windows = results["windows"]
    ratio = results["ratios_vs_baseline"]["read"]["v2"]
    assert ratio["pairs"] == pairs_expected(windows, "v2", "v1")
    assert [entry["pairs"] for entry in ratio["per_repeat"]] == [
        pairs_expected(windows, "v2", "v1", repeat=repeat) for repeat in (1, 2)
    ]
    for window in empty_windows(windows):
        flags = results["apps"][window["arm"]]["scenarios"]["read"]["flags"]
        assert any("served no request" in flag for flag in flags), flags
    # Two of three apps: not a complete comparison, so results/latest stays where it was.
    assert not (run_dir.parent / "latest").exists()
    assert "results/latest was not moved" in result.stdout
    log = (run_dir / "runs" / "01" / "read.log").read_text()
    assert "2 workers connected" in log
    assert leftovers == set()


def test_fit_probes_each_scenario_once_and_keeps_what_was_set_by_hand(distributed_run) -> None:
    results, run_dir, result, _ = distributed_run
    assert results["settings"]["fit"] is True
    assert results["settings"]["set_by_hand"] == ["users", "window_s"]
    [(name, timetable)] = results["timetable"].items()
    assert name == "read"
    # --users 1 and --window 0.4 kept; the settle fitted: at least the probe's p99 and 0.2 s,
    # at most half the window set by hand, so 0.2 s either way (said why).
    assert (timetable["users"], timetable["window_s"], timetable["settle_s"]) == (1, 0.4, 0.2)
    users, settle, window = timetable["why"]
    assert (users, window) == ("users 1: as set", "window 0.4 s: as set")
    # Which of the two reasons depends on the p99 the probe measured (over 0.2 s on a busy
    # machine): both say the p99 and give 0.2 s.
    assert settle.startswith(
        (
            "settle 0.2 s: at least the p99 latency",
            "settle 0.2 s: half the window set by hand (the p99 latency",
        )
    ), settle
    for arm in ("v1", "v2"):
        probe = timetable["probe"][arm]
        assert [level["users"] for level in probe] == [1, 2, 4, 8, 16, 32]
        assert all(level["rps"] > 0 and level["busy"] is not None for level in probe), probe
    # A value kept as set but too small for what the probe measured is a flag of the run.
    assert all(note in results["flags"] for note in timetable["notes"])
    # One probe, before the repeats and apart from them (no repeat's memory holds its load),
    # in one locust process: a slot's users count per process, so two would double each level.
    probe_log = run_dir / "runs" / "fit" / "read-fit.log"
    assert "workers connected" not in probe_log.read_text()
    assert not list((run_dir / "runs" / "01").glob("*-fit.log"))
    assert "READ timetable: users 1: as set" in result.stdout
    report = (run_dir / "report.md").read_text()
    assert "## Timetable (--fit)" in report
    assert "| users per scenario | READ 1 |" in report


@pytest.mark.skipif(not wrk_available_or_installable(), reason="wrk is missing and not root")
def test_cross_check_measures_again_with_wrk_in_paired_windows(distributed_run) -> None:
    results, _, result, _ = distributed_run
    cross = results["cross_check"]
    assert cross["tool"].startswith("wrk")
    # wrk loads the run's GET scenarios (READ and READ synthetic), here READ alone.
    assert list(cross["ratios_vs_baseline"]) == ["read"]
    ratio = cross["ratios_vs_baseline"]["read"]["v2"]
    windows = cross["windows"]
    assert ratio["pairs"] == pairs_expected(windows, "v2", "v1")
    assert ratio["locust_ratio"] == results["ratios_vs_baseline"]["read"]["v2"]["estimate"]
    assert len(windows) == 2 * 6 * 2  # arms x pairs x repeats
    assert all(w["failures"] == 0 and w["app_cpu_s"] is not None for w in windows)
    assert all(sum(w["requests"] for w in windows if w["arm"] == arm) > 0 for arm in ("v1", "v2"))
    assert [w["arm"] for w in windows[:4]] == ["v1", "v2", "v2", "v1"]
    assert "wrk cross-check" in result.stdout


def test_cross_check_without_wrk_is_one_line(tmp_path) -> None:
    # No wrk and no apt-get on this PATH: nothing to measure with, nothing to install it with.
    result = run_in_process(
        "--cross-check", "--quick", "--results-dir", str(tmp_path / "results"), PATH=str(tmp_path)
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "./test.sh: error: --cross-check needs wrk, which is not installed; install it "
        "(Debian/Ubuntu: apt-get install wrk) and retry"
    )
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("mode", ["dataset", "benchmark"])
def test_a_malformed_database_url_is_one_line_without_the_password(mode: str, tmp_path) -> None:
    options = (
        ["--results-dir", str(tmp_path / "results"), *port_options()] if mode == "benchmark" else []
    )
    result = run_in_process(
        mode, *options, DATABASE_URL="postgresql://lab:S3CRETPW@127.0.0.1:abc/lab"
    )
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("./test.sh: error: DATABASE_URL is not a valid URL")
    assert "S3CRETPW" not in result.stderr + result.stdout
    assert not (tmp_path / "results").exists()  # refused before anything was created
