"""`./test.sh shapes`: its cells (what each sends, the cheap check of an answer), and a real run
with the shortest timetable that takes every step: every cell verified in every arm, timed,
results.json, the reports, the rebuild, nothing left running; one-line errors."""

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
from loadtest.modes.shapes.app import tree, tree_nodes, union_items
from loadtest.modes.shapes.cells import ShapeCell, cell_request, expected_answer, plan_cells
from loadtest.modes.shapes.settings import ShapesSettings
from loadtest.output.results_file import SCHEMA_VERSION


def test_the_default_cells_pair_each_union_with_its_tag_and_parse_obj_as_with_its_adapter() -> None:
    names = [cell.name for cell in plan_cells(ShapesSettings())]
    assert names[:4] == ["union2-100", "union2-1000", "union2-tagged-100", "union2-tagged-1000"]
    assert "union20-tagged-validate-1000" in names
    assert names[-6:] == [
        "tree-8",
        "tree-validate-8",
        "parse_obj_as-1",
        "adapter-1",
        "parse_obj_as-100",
        "adapter-100",
    ]


def test_every_union_member_carries_its_own_tag_and_the_pages_take_them_in_turn() -> None:
    items = union_items(5, 12)
    assert [item["kind"] for item in items[:6]] == ["v00", "v01", "v02", "v03", "v04", "v00"]
    assert items[7] == {"kind": "v02", "id": 7, "name": "member 2", "weight_02": 1.5, "note": None}
    assert tree_nodes(4) == 15 and len(json.dumps(tree(4))) > len(json.dumps(tree(3)))


@pytest.mark.parametrize(
    ("cell", "answer", "problem"),
    [
        (ShapeCell("union", 2, 20), json.dumps(expected_answer(ShapeCell("union", 2, 20))), None),
        (ShapeCell("union", 3, 20), '{"items":[{"kind":"v00"}]}', "expected 3 members"),
        (ShapeCell("tree", 2), json.dumps(tree(2), separators=(",", ":")), None),
        (ShapeCell("tree-validate", 3), '{"nodes":7}', None),
        (ShapeCell("adapter", 10), '{"count":9}', 'expected {"count":10}'),
        (ShapeCell("union-validate", 10, 2), '{"detail":[]}', 'expected {"count":10}'),
    ],
)
def test_every_answer_gets_a_cheap_check(cell: ShapeCell, answer: str, problem: str | None) -> None:
    status = 200
    assert (
        cell_request(cell).problem(status, answer.replace(", ", ",").replace(": ", ":").encode())
        == problem
    )


def test_a_real_shapes_run_verifies_and_times_every_cell_and_leaves_nothing_running(
    tmp_path: Path,
) -> None:
    before = lab_processes()
    arguments = ["shapes", "--members", "2", "--union-sizes", "10", "--validate-sizes", "10"]
    arguments += ["--tree-depths", "3", "--row-sizes", "1", "--pairs", "6", "--apps", "v1,v2"]
    arguments += ["--window", "0.4", "--users", "1", "--no-calibration"]
    result = run_runner(*arguments, *port_options(), "--results-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert leftover_processes(before) == {}
    assert "every cell of v1, v2 verified (8 cells, the same answers in every arm)" in result.stdout
    run_dir = only_run(tmp_path)
    assert run_dir.name.endswith("-shapes")
    results = json.loads((run_dir / "results.json").read_text())
    assert (results["schema_version"], results["kind"]) == (SCHEMA_VERSION, "shapes")
    assert [cell["name"] for cell in results["cells"]] == [
        "union2-10",
        "union2-tagged-10",
        "union2-validate-10",
        "union2-tagged-validate-10",
        "tree-3",
        "tree-validate-3",
        "parse_obj_as-1",
        "adapter-1",
    ]
    windows = results["windows"]
    for cell in results["cells"]:
        for app in ("v1", "v2"):
            figures = cell["arms"][app]
            assert figures["windows"] == 6 and figures["failures"] == 0, (cell["name"], app)
        # Every round, but one where the machine stalled either window empty (flagged).
        slots = [f"{arm}/{cell['name']}" for arm in ("v2", "v1")]
        expected = pairs_expected(windows, *slots)
        assert cell["ratios"]["v2/v1"]["rps"]["pairs"] == expected
    within = {(item["cell"], item["over"]) for item in results["within_arms"]}
    assert within == {
        ("union2-tagged-10", "union2-10"),
        ("union2-tagged-validate-10", "union2-validate-10"),
        ("adapter-1", "parse_obj_as-1"),
    }
    for item in results["within_arms"]:  # two cells of one round, in one arm
        slots = [f"v2/{item[cell]}" for cell in ("cell", "over")]
        expected = pairs_expected(windows, *slots, round_of=lambda group: group // 8)
        assert item["ratios"]["v2"]["pairs"] == expected, item
    assert results["versions"]["v2"]["pydantic_core"].startswith("2.")
    assert results["versions"]["v1"]["pydantic_core"] is None
    assert "adapter-1 over parse_obj_as-1" in result.stdout
    assert (run_dir / "shapes.svg").read_text().startswith("<svg")
    assert "| tree-validate-3 |" in (run_dir / "report.md").read_text()
    (run_dir / "report.md").unlink()
    rebuilt = run_in_process("report", str(run_dir), "--results-dir", str(tmp_path))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "| tree-validate-3 |" in (run_dir / "report.md").read_text()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--members", "3"], "choose from 2, 5, 20"),
        (["--union-sizes", "0"], "0 must be 1 to 5,000"),
        (["--tree-depths", "13"], "13 must be 1 to 12"),
        (["--row-sizes", "x"], "'x' is not a whole number"),
        (["--load-processes", "2"], "--load-processes does not apply to the shapes mode"),
    ],
)
def test_shapes_option_errors_are_one_line(arguments: list[str], message: str) -> None:
    result = run_in_process("shapes", *arguments)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
