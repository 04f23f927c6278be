"""`./test.sh --scenarios async-read,async-synthetic,async-write`: the `async def` twins of the
benchmark's scenarios, on a short real run (verified, measured, their writes counted, their
statements counted at the async engine)."""

import json
from typing import Any

import pytest

from harness_tests.runner import TINY_RUN, lab_processes, only_run, port_options, run_runner

ASYNC = ("async-read", "async-synthetic", "async-write")


@pytest.fixture(scope="module")
def async_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], set[int]]:
    results_dir = tmp_path_factory.mktemp("async")
    before = lab_processes()
    result = run_runner(
        *TINY_RUN,
        "--scenarios",
        ",".join(ASYNC),
        "--apps",
        "v1,v2",
        "--repeats",
        "1",
        "--no-calibration",
        "--results-dir",
        str(results_dir),
        *port_options(),
    )
    leftovers = lab_processes() - before
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((only_run(results_dir) / "results.json").read_text()), leftovers


def test_every_async_scenario_is_verified_measured_and_counted(async_run) -> None:
    results, leftovers = async_run
    for arm in ("v1", "v2"):
        figures = results["apps"][arm]["scenarios"]
        for name in ASYNC:
            assert figures[name]["requests"] > 0 and figures[name]["failures"] == 0, (arm, name)
            assert not [flag for flag in figures[name]["flags"] if "verification" in flag]
        write = figures["async-write"]
        assert write["acknowledged_writes"] == write["new_rows"] > 0
        assert {name: figures[name]["statements_per_request"] for name in ASYNC} == {
            "async-read": 1.0,
            "async-synthetic": None,
            "async-write": 1.0,
        }
    assert list(results["ratios_vs_baseline"]) == list(ASYNC)
    assert "timetable" not in results  # no scenario of theirs declares one
    assert leftovers == set()
