"""`./test.sh report RUN_DIR` rebuilds a run's reports from its results.json alone: a run of
every mode, written by an earlier version of the lab (fixtures/runs/<kind>/, a --quick run of
each, results.json and the report.md it wrote then), gives every report of its kind and the
same report.md today."""

import shutil
from pathlib import Path

import pytest

from loadtest.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runs"
KINDS = sorted(path.name for path in FIXTURES.iterdir() if path.is_dir())
# What docs/results.md says `report RUN_DIR` rebuilds for each kind.
REBUILT = {
    "benchmark": {"report.md", "report.html", "ratios.svg"},
    "compare": {"report.md", "report.html", "ratios.svg"},
    "ladder": {"report.md"},
    "micro": {"report.md"},
    "profile": {"report.md"},
    "scale": {"report.md", "report.html", "scale.svg"},
    "sweep": {"report.md", "report.html", "sweep.svg"},
    "workers": {"report.md", "report.html", "workers.svg"},
    "latency": {"report.md", "report.html", "latency.svg"},
    "versions": {"report.md", "report.html", "versions.svg"},
}


def test_there_is_an_old_run_of_every_kind() -> None:
    assert KINDS == [
        "benchmark",
        "compare",
        "ladder",
        "latency",
        "micro",
        "profile",
        "scale",
        "sweep",
        "versions",
        "workers",
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_report_rebuilds_every_report_and_the_same_report_md(kind: str, tmp_path: Path) -> None:
    run_dir = tmp_path / kind
    run_dir.mkdir()
    shutil.copy(FIXTURES / kind / "results.json", run_dir / "results.json")
    assert main(["report", str(run_dir)]) == 0
    assert {path.name for path in run_dir.iterdir()} == {"results.json"} | REBUILT[kind]
    rebuilt = (run_dir / "report.md").read_text()
    assert rebuilt == (FIXTURES / kind / "report.md").read_text()


@pytest.mark.parametrize("kind", KINDS)
def test_report_replaces_planted_symlinks_and_never_writes_through_them(
    kind: str, tmp_path: Path
) -> None:
    """Issue 53: every report `report` writes, planted beforehand as a symlink to a file outside
    the run folder, is replaced by a file of its own; the file outside keeps its text."""
    run_dir = tmp_path / kind
    run_dir.mkdir()
    shutil.copy(FIXTURES / kind / "results.json", run_dir / "results.json")
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in REBUILT[kind]:
        (outside / name).write_text("keep me\n")
        (run_dir / name).symlink_to(outside / name)
    assert main(["report", str(run_dir)]) == 0
    for name in REBUILT[kind]:
        assert not (run_dir / name).is_symlink() and (run_dir / name).stat().st_size > 0, name
        assert (outside / name).read_text() == "keep me\n", name
    assert (run_dir / "report.md").read_text() == (FIXTURES / kind / "report.md").read_text()
    assert not [path.name for path in run_dir.iterdir() if path.name.startswith(".")]
