"""A real versions run, as short as it goes: one step (Pydantic 2.13 to the lab's v2, 2.14), READ
alone, six pairs of short windows, one start-up each, and a generated app of ten models started
twice on each arm (the first time, its routes and OpenAPI checked). The derived arm's
environment is built (or found in the cache), each arm reports the versions it ran, the step's
ratio is paired, the reports are written and rebuilt from results.json, and nothing is left
running."""

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from harness_tests.pairing import pairs_expected
from harness_tests.runner import (
    TINY_RUN,
    free_port,
    lab_processes,
    only_run,
    run_in_process,
    run_runner,
)


def consecutive_free_ports(count: int) -> int:
    """The first of `count` consecutive ports nothing listens on, from this worker's block."""
    while True:
        first = free_port()
        probes = [socket.socket() for _ in range(count - 1)]
        try:
            for offset, probe in enumerate(probes, 1):
                probe.bind(("127.0.0.1", first + offset))
            return first
        except OSError:
            continue
        finally:
            for probe in probes:
                probe.close()


@pytest.fixture(scope="module")
def versions_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, str]:
    results_dir = tmp_path_factory.mktemp("versions")
    before = lab_processes()
    result = run_runner(
        "versions",
        "--minors",
        "2.13,2.14",
        "--scenarios",
        "read",
        *TINY_RUN,
        "--startup-samples",  # the last one given counts: one start each
        "1",
        "--generated-models",
        "10",
        "--no-calibration",
        "--ports-from",
        str(consecutive_free_ports(3)),
        "--results-dir",
        str(results_dir),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert lab_processes() - before == set()
    run_dir = only_run(results_dir)
    return json.loads((run_dir / "results.json").read_text()), run_dir, result.stdout


def test_the_step_is_measured_in_paired_windows_of_three_arms(versions_run) -> None:
    results, _, _ = versions_run
    assert results["kind"] == "versions"
    [step] = results["steps"]
    assert (step["step"], step["from"], step["to"]) == (1, "v2@2.13", "v2")
    assert sorted(step["arm_order"]) == ["v1", "v2", "v2@2.13"]
    read = step["scenarios"]["read"]
    windows = results["windows"]
    assert read["step"]["pairs"] == pairs_expected(windows, "v2", "v2@2.13")
    assert read["to_over_v1"]["pairs"] == pairs_expected(windows, "v2", "v1")
    assert read["step"]["estimate"] > 0 and read["step"]["cpu_per_request"]["pairs"] > 0
    for arm in ("v1", "v2@2.13", "v2"):
        figures = read["arms"][arm]
        assert figures["windows"] == 6 and figures["failures"] == 0, (arm, figures)


def test_each_arm_ran_the_versions_it_was_built_for(versions_run) -> None:
    results, _, stdout = versions_run
    arms = results["arms"]
    assert list(arms) == ["v1", "v2@2.13", "v2"]
    assert arms["v1"]["versions"]["pydantic"].startswith("1.10.")
    assert (
        arms["v2@2.13"]["versions"]["pydantic"],
        arms["v2@2.13"]["versions"]["pydantic_core"],
    ) == (
        "2.13.5",
        "2.46.5",
    )
    assert arms["v2"]["versions"]["pydantic"] == "2.14.3"
    # Only the derived arm has an environment of its own, and says what it resolved to.
    environment = arms["v2@2.13"]["environment"]
    assert environment["versions"]["pydantic"] == "2.13.5"
    assert Path(environment["python"]).is_file()
    assert arms["v1"]["environment"] is None and arms["v2"]["environment"] is None
    assert "v2@2.13: python 3." in stdout and ("built in" in stdout or "reused" in stdout)
    for arm in arms.values():
        assert arm["startup"]["samples"] == 1 and arm["memory"]["idle_rss_mib"] > 0


def test_the_generated_app_started_on_every_arm_in_its_idiom(versions_run) -> None:
    results, _, _ = versions_run
    for arm, figures in results["arms"].items():
        generated = figures["generated"]
        assert (generated["models"], generated["processes"], generated["unfinished"]) == (
            10,
            2,
            None,
        ), arm
        assert 0 < generated["import_s"]["median"] < generated["to_health_s"]["median"]
        assert generated["rss_idle_mib"]["median"] > 0
        # The first round's process checked every route and OpenAPI after its start was timed.
        assert generated["checked"] == "passed", arm
    ratios = results["steps"][0]["generated"]
    assert ratios["to_health_s"]["pairs"] == 2 and ratios["rss_idle_mib"]["estimate"] > 0


def test_the_reports_say_what_moved_and_are_rebuilt_from_results_json(versions_run) -> None:
    _, run_dir, _ = versions_run
    report = (run_dir / "report.md").read_text()
    assert "| Pydantic 2.13.5 → 2.14.3 |" in report
    assert "10 models: start-up" in report
    assert "<svg" in (run_dir / "report.html").read_text()
    assert (run_dir / "runs" / "01" / "v2@2.13.log").exists()
    (run_dir / "report.md").unlink()
    assert run_in_process("report", str(run_dir)).returncode == 0
    assert (run_dir / "report.md").read_text() == report
