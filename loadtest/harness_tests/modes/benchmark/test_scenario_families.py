"""Two families of scenarios beside the benchmark's own, on one short real run (one run's
start-up, database and reports for both; they share no code path that the other changes):

- `--scenarios async-read,async-synthetic,async-write`: the `async def` twins of the
  benchmark's scenarios (verified, measured, their writes counted, their statements counted at
  the async engine);
- `--scenarios read-eager,read-lazy`: a page of posts with their comments and tags (the
  dataset's related rows loaded, every answer verified, the statements each request sent
  counted at the arms' engines, the scenarios' own timetable, its settle bounded by the window
  set by hand), and the pieces it is made of on fixed inputs."""

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness_tests.runner import TINY_RUN, lab_processes, only_run, port_options, run_runner
from loadtest.analysis.fit import declared_timetables
from loadtest.lab.statements import (
    StatementCount,
    StatementReading,
    per_request,
    statements_between,
)
from loadtest.load.scenarios import RELATED_TIMETABLE
from loadtest.load.verify import post_shape_problems
from loadtest.pipeline.measure import planned_seconds
from loadtest.pipeline.settings import BenchmarkSettings

ASYNC = ("async-read", "async-synthetic", "async-write")
RELATED = ("read-eager", "read-lazy")


@pytest.fixture(scope="module")
def families_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, set[int]]:
    """Two arms, both families, TINY_RUN's timetable: --users and --window set by hand are
    kept for every scenario, and the related pages' own settle (0.5 s) is bounded to half the
    window."""
    results_dir = tmp_path_factory.mktemp("families")
    before = lab_processes()
    result = run_runner(
        *TINY_RUN,
        "--scenarios",
        ",".join(RELATED + ASYNC),
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
    run_dir = only_run(results_dir)
    return json.loads((run_dir / "results.json").read_text()), run_dir, leftovers


def test_every_async_scenario_is_verified_measured_and_counted(families_run) -> None:
    results, _, leftovers = families_run
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
    assert list(results["ratios_vs_baseline"]) == list(RELATED + ASYNC)
    for name in ASYNC:  # no timetable of their own: the run's
        assert results["timetable"][name]["why"] == ["the run's: 1 users, 0.4 s windows"]
    assert leftovers == set()


def test_both_ways_are_measured_and_their_statements_counted(families_run) -> None:
    results, run_dir, leftovers = families_run
    assert results["settings"]["scenarios"] == list(RELATED + ASYNC)
    for arm in ("v1", "v2"):
        for name, statements in (("read-eager", 3.0), ("read-lazy", 41.0)):
            figures = results["apps"][arm]["scenarios"][name]
            assert figures["requests"] > 0 and figures["failures"] == 0, (arm, name)
            assert not [flag for flag in figures["flags"] if "verification" in flag]
            assert figures["statements_per_request"] == statements, (arm, name)
    for name in RELATED:
        assert results["ratios_vs_baseline"][name]["v2"]["estimate"] > 0
    report = (run_dir / "report.md").read_text()
    assert "READ related, lazy SQL statements/request | 41.0 | 41.0 |" in report
    assert leftovers == set()


def test_the_scenarios_own_settle_is_bounded_by_the_window_set_by_hand(families_run) -> None:
    results, run_dir, _ = families_run
    for name in RELATED:
        timetable = results["timetable"][name]
        assert (timetable["users"], timetable["window_s"], timetable["settle_s"]) == (1, 0.4, 0.2)
        assert timetable["why"] == [RELATED_TIMETABLE.why]
        [note] = timetable["notes"]
        assert "its own settle of 0.5 s is more than half the window set by hand" in note
        assert note in results["flags"]
    report = (run_dir / "report.md").read_text()
    assert "READ related, eager 1 users × 0.4s" in report
    assert "## Timetable\n\nPer scenario: its own where it declares one" in report


def test_only_a_scenario_that_declares_a_timetable_changes_the_runs() -> None:
    default = BenchmarkSettings()
    assert declared_timetables(default, default.plan, ()) == {}
    mixed = replace(default, scenarios=("read", "read-lazy"))
    timetables = declared_timetables(mixed, mixed.plan, ())
    read, lazy = timetables["read"], timetables["read-lazy"]
    assert (read.users, read.window_s, read.settle_s) == (10, 0.6, 0.2)
    assert (lazy.users, lazy.window_s, lazy.settle_s) == (4, 3.0, 0.5)
    kept = declared_timetables(replace(mixed, users=7), mixed.plan, ("users",))["read-lazy"]
    assert (kept.users, kept.window_s, kept.notes) == (7, 3.0, ())
    # A window set by hand bounds the settle to half of it, as the fit does, and says so.
    short = replace(mixed, window_s=0.6)
    bounded = declared_timetables(short, short.plan, ("window_s",))["read-lazy"]
    assert (bounded.window_s, bounded.settle_s) == (0.6, 0.3)
    [note] = bounded.notes
    assert note.startswith("READ related, lazy: its own settle of 0.5 s is more than half")
    # The time the progress bar plans: the related pages' windows are five times as long.
    assert planned_seconds(mixed) > planned_seconds(replace(default, scenarios=("read", "write")))


def test_statements_per_request_needs_both_readings_from_one_process() -> None:
    before, after = StatementReading(10, 2, pid=7), StatementReading(92, 4, pid=7)
    assert statements_between(before, after) == StatementCount(82, 2)
    assert statements_between(before, replace(after, pid=8)) is None  # another worker
    assert statements_between(None, after) is None  # no /statements (a user's service)
    assert per_request([StatementCount(82, 2), StatementCount(41, 1)]) == 41.0
    assert per_request([StatementCount(0, 0)]) is None  # no request opened a session


def test_a_related_post_is_verified_with_its_rows() -> None:
    post = {
        "id": 1,
        "published_at": "2024-01-01T00:00:00Z",
        "updated_at": "2024-01-01T00:00:00Z",
        "title": "t",
        "content": "c",
        "is_published": True,
        "comments": [{"id": 1, "text": "x", "created_at": "2024-01-01T00:00:00Z", "word_count": 1}],
        "tags": [{"id": 3, "name": "tag-03"}],
    }
    assert post_shape_problems(post, related=True) == []
    assert post_shape_problems(post)[0].startswith("post fields are")
    assert post_shape_problems({**post, "tags": [{"id": 3}]}, related=True) == [
        "tags of post 1 are not a list of ['id', 'name']"
    ]
