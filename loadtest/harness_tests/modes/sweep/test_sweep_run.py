"""`./test.sh sweep` run for real, with the shortest timetable that takes every step (every
shape at two sizes, two arms, two rounds of short windows): results.json, the reports, the
rebuild, one-line errors, nothing left running."""

import json
from pathlib import Path

import pytest

from harness_tests.pairing import pairs_expected
from harness_tests.runner import (
    lab_processes,
    leftover_processes,
    only_run,
    port_options,
    run_in_process,
    run_runner,
)
from loadtest.output.results_file import SCHEMA_VERSION


def test_a_real_sweep_verifies_and_times_every_cell_and_leaves_nothing_running(
    tmp_path: Path,
) -> None:
    before = lab_processes()
    # A read (nested: posts with their comments) and a write (bulk): the other two shapes take
    # the same paths, and their answers are checked in every arm by tests/api/test_payloads.py.
    arguments = ["sweep", "--shapes", "nested,bulk", "--sizes", "1,20", "--pairs", "6"]
    arguments += ["--apps", "v1,v2"]
    arguments += ["--window", "0.4", "--users", "1", "--no-calibration"]
    result = run_runner(*arguments, *port_options(), "--results-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert leftover_processes(before) == {}
    assert "every cell of v1, v2 verified (4 cells, reads identical in every arm)" in (
        result.stdout
    )
    run_dir = only_run(tmp_path)
    assert run_dir.name.endswith("-sweep")
    results = json.loads((run_dir / "results.json").read_text())
    assert (results["schema_version"], results["kind"]) == (SCHEMA_VERSION, "sweep")
    assert results["comparisons"] == ["v2/v1"]
    names = [cell["name"] for cell in results["cells"]]
    assert names == [f"{shape}-{size}" for shape in results["shapes"] for size in (1, 20)]
    for cell in results["cells"]:
        for app in ("v1", "v2"):
            figures = cell["arms"][app]
            assert figures["windows"] == 6 and figures["failures"] == 0, (cell["name"], app)
            assert figures["rps"] > 0 and figures["app_cpu_us_per_post"] > 0
            assert figures["response_bytes"] > 0
        ratio = cell["ratios"]["v2/v1"]["rps"]
        # Every round, but one where the machine stalled either window empty (flagged).
        slots = [f"{arm}/{cell['name']}" for arm in ("v2", "v1")]
        pairs = pairs_expected(results["windows"], *slots)
        assert ratio["pairs"] == pairs and (ratio["estimate"] or 0) >= 0 and pairs >= 1
        assert cell["gains"]["v2/v1"]["by"] in ("rps", "cpu")
    by_name = {cell["name"]: cell for cell in results["cells"]}
    # Reads are measured by their answer, writes by their body.
    assert by_name["nested-20"]["response_bytes"] > 10 * by_name["nested-1"]["response_bytes"]
    assert by_name["bulk-20"]["request_bytes"] > 10 * by_name["bulk-1"]["request_bytes"]
    assert by_name["nested-1"]["request_bytes"] == 0
    assert "nested: v2/v1" in result.stdout
    html = (run_dir / "report.html").read_text()
    assert html.count("<svg") == 1  # the published points belong to the flat panel, not run
    assert (run_dir / "sweep.svg").read_text().startswith("<svg")
    assert "| nested-20 |" in (run_dir / "report.md").read_text()

    (run_dir / "report.md").unlink()
    rebuilt = run_in_process("report", str(run_dir), "--results-dir", str(tmp_path))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "| nested-20 |" in (run_dir / "report.md").read_text()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--sizes", "0"], "0 must be 1 to 5,000"),
        (["--sizes", "10,ten"], "sizes are whole numbers"),
        (["--sizes", "5001"], "5001 must be 1 to 5,000"),
        (["--comments", "11"], "11 must be 0 to 10"),
        (["--shapes", "flat,deep"], "choose from flat, nested, bulk, validate"),
        (["--pairs", "5"], "5 is below 6, the fewest pairs that give a ratio its 95% interval"),
        (["--load-processes", "2"], "--load-processes does not apply to the sweep mode"),
    ],
)
def test_sweep_option_errors_are_one_line(arguments: list[str], message: str) -> None:
    result = run_in_process("sweep", *arguments)
    assert result.returncode == 2
    assert message in result.stderr, result.stderr


def test_a_write_shape_left_without_sizes_is_a_one_line_error(tmp_path: Path) -> None:
    arguments = ["sweep", "--sizes", "5000", "--shapes", "flat,bulk", "--results-dir"]
    result = run_in_process(*arguments, str(tmp_path), *port_options())
    assert result.returncode != 0
    assert "--sizes 5000 leaves bulk nothing: it takes at most 1,000 posts" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # no run folder for a run that never started
