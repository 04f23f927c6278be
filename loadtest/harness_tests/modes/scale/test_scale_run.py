"""`./test.sh scale` run for real, with the shortest timetable that takes every step (two tiny
sizes, one timed process each, two arms and a defer_build variant): results.json, the reports,
the rebuild, one-line errors, nothing left running."""

import json
import re
from pathlib import Path

import pytest

from harness_tests.runner import (
    lab_processes,
    leftover_processes,
    only_run,
    port_options,
    run_in_process,
    run_runner,
)
from loadtest.generated.figures import METRICS
from loadtest.output.results_file import SCHEMA_VERSION


def test_a_real_scale_run_writes_every_figure_and_leaves_nothing_running(tmp_path: Path) -> None:
    before = lab_processes()
    # --quick: one timed process per subject and size (--processes takes no fewer than 6).
    arguments = ["scale", "--models", "4,2", "--quick", "--apps", "v1,v2"]
    result = run_runner(*arguments, *port_options(), "--results-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert leftover_processes(before) == {}
    run_dir = only_run(tmp_path)
    assert run_dir.name.endswith("-scale")
    results = json.loads((run_dir / "results.json").read_text())
    assert (results["schema_version"], results["kind"]) == (SCHEMA_VERSION, "scale")
    scale = results["scale"]
    assert scale["models"] == [2, 4]
    assert list(scale["subjects"]) == ["v1", "v2", "v2+defer_build"]
    assert scale["subjects"]["v1"]["versions"]["pydantic_compiled"] is True
    for key in scale["subjects"]:
        for models in ("2", "4"):
            cell = scale["figures"][key][models]
            assert set(cell) == set(METRICS)
            assert all(figures["samples"] == 1 for figures in cell.values())
            assert cell["rss_routes_mib"]["median"] > 0
    assert set(scale["ratios"]) == {"v2/v1", "v2+defer_build/v1", "v2+defer_build/v2"}
    ratio = scale["ratios"]["v2/v1"]["by_models"]["4"]["to_health_s"]
    assert ratio["pairs"] == 1 and ratio["ci95_low"] is None and ratio["estimate"] > 0
    assert len(scale["raw"]) == 3 * 2
    assert "v2/v1 at 4 models: start-up to first /health" in result.stdout
    html = (run_dir / "report.html").read_text()
    assert html.count("<svg") == 3 and "defer_build" in html
    assert (run_dir / "scale.svg").read_text().count("<svg") == 1
    assert "| start-up to first /health, s | 2 |" in (run_dir / "report.md").read_text()
    # The scratch folder of generated apps is gone.
    [scratch] = re.findall(r"/\S*lab-scale-[^\s.]+", result.stdout)
    assert not Path(scratch).exists()

    (run_dir / "report.md").unlink()
    rebuilt = run_in_process("report", str(run_dir), "--results-dir", str(tmp_path))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "start-up to first /health" in (run_dir / "report.md").read_text()


def test_a_real_run_of_a_shape_measures_its_variant_beside_it(tmp_path: Path) -> None:
    """The union shape, two members, one timed process: the discriminated variant is measured
    beside the plain union in every arm and compared with v1's in the same variant."""
    before = lab_processes()
    arguments = ["scale", "--shape", "union", "--sizes", "2", "--quick"]
    result = run_runner(
        *arguments, "--apps", "v1,v2", *port_options(), "--results-dir", str(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    assert leftover_processes(before) == {}
    results = json.loads((only_run(tmp_path) / "results.json").read_text())
    scale = results["scale"]
    assert (scale["shape"], scale["size_label"], scale["models"]) == ("union", "union members", [2])
    assert list(scale["subjects"]) == ["v1", "v1+tagged", "v2", "v2+tagged"]
    assert scale["apps"]["2"] == {"models": 102, "routes": 200, "routers": 10}
    assert set(scale["ratios"]) == {"v2/v1", "v2+tagged/v1+tagged", "v1+tagged/v1", "v2+tagged/v2"}
    assert "v2+tagged/v1+tagged at 2 union members: start-up to first /health" in result.stdout
    # Verification says how long the timed rounds will take, before they start.
    assert re.search(
        r"2 union members verified in \d+ s: its timed round will take about", result.stdout
    )
    assert "the union shape" in (only_run(tmp_path) / "report.md").read_text()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--models", "0"], "0 must be at least 1"),
        (["--models", "10,ten"], "'ten' is not a whole number"),
        (["--models", "10,10"], "names a size twice"),
        (
            ["--processes", "5"],
            "5 is below 6, the fewest processes that give a ratio its 95% interval (only "
            "--quick times fewer: 1, a first look without intervals)",
        ),
        (["--pairs", "3"], "--pairs does not apply to the scale mode"),
        (["--shape", "tree"], "argument --shape: invalid choice: 'tree'"),
        (["--bound", "1"], "must be between 5 and 3600 seconds"),
        (["--defer-build", "--no-defer-build"], "not allowed with argument"),
    ],
)
def test_scale_option_errors_are_one_line(arguments: list[str], message: str) -> None:
    result = run_in_process("scale", *arguments)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--sizes", "3000"], "--sizes 3000: the service shape takes at most 2000 models"),
        (["--shape", "routes", "--sizes", "3"], "routes per model come in multiples of 2"),
        (["--shape", "union", "--sizes", "1"], "a union has at least 2 members"),
    ],
)
def test_a_size_the_shape_cannot_build_is_one_line(arguments: list[str], message: str) -> None:
    result = run_in_process("scale", *arguments)
    assert result.returncode == 1
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
