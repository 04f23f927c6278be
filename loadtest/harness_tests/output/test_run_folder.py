"""Run folders: one per run, never reused, gone again when nothing was measured."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from loadtest.lab.errors import LabError
from loadtest.output.run_folder import create_run_dir, run_folder

STARTED = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)


def test_a_run_that_fails_before_measuring_leaves_no_folder(tmp_path: Path) -> None:
    results = tmp_path / "results"
    with pytest.raises(LabError), run_folder(results, STARTED, "ladder") as folder:
        assert folder.path == results / "20261123T120000Z-ladder"
        (folder.path / "app_v1.log").write_text("it did not start")
        raise LabError("app_v1 exited during start-up")
    assert not results.exists()


def test_an_interrupted_run_that_measured_keeps_its_evidence(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), run_folder(tmp_path, STARTED) as folder:
        folder.begin_measuring()
        (folder.path / "read.log").write_text("half a run")
        raise KeyboardInterrupt
    assert (tmp_path / "20261123T120000Z" / "read.log").exists()


def test_two_runs_in_one_second_do_not_share_a_folder(tmp_path: Path) -> None:
    create_run_dir(tmp_path, STARTED)
    with pytest.raises(LabError, match="another run started in the same second"):
        create_run_dir(tmp_path, STARTED)
