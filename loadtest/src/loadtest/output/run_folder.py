"""Run folders: results/<UTC timestamp>[-<mode>]/, created for one run, removed again when the
run fails before it measured anything; the reports a mode writes into one; and results/latest."""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from loadtest.lab.errors import LabError
from loadtest.lab.files import write_text_safely


@dataclass
class RunFolder:
    path: Path
    measuring: bool = False  # once set, the folder stays whatever happens: it holds evidence

    def begin_measuring(self) -> None:
        self.measuring = True


def create_run_dir(results_dir: Path, started_at: datetime, suffix: str | None = None) -> Path:
    """results/<UTC timestamp>/ for a benchmark run, results/<UTC timestamp>-<suffix>/ for the
    other modes; never an existing one."""
    name = started_at.strftime("%Y%m%dT%H%M%SZ") + (f"-{suffix}" if suffix else "")
    run_dir = results_dir / name
    try:
        run_dir.mkdir(parents=True, exist_ok=False)
    except FileExistsError:
        raise LabError(
            f"{run_dir} already exists: another run started in the same second? Start one run "
            "at a time"
        ) from None
    except OSError as error:
        raise LabError(f"cannot create {run_dir}: {error.strerror}") from None
    return run_dir


@contextmanager
def run_folder(
    results_dir: Path, started_at: datetime, suffix: str | None = None
) -> Iterator[RunFolder]:
    """A new run folder; if the run fails (or is interrupted) before `begin_measuring`, the
    folder goes again, so a run that measured nothing leaves nothing behind."""
    folder = RunFolder(create_run_dir(results_dir, started_at, suffix))
    try:
        yield folder
    except BaseException:
        if not folder.measuring:
            shutil.rmtree(folder.path, ignore_errors=True)
            parent = folder.path.parent
            if parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()  # results/ itself, if this run created it
        raise


def link_latest(results_dir: Path, run_dir: Path) -> None:
    """results/latest always points at the newest complete run (replaced atomically)."""
    temporary = results_dir / f".latest-{os.getpid()}"
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(run_dir.name)
    temporary.replace(results_dir / "latest")


def write_reports_into(
    run_dir: Path, markdown: str, html: str | None = None, charts: dict[str, str] | None = None
) -> list[Path]:
    """report.md, report.html (when the mode has one) and its charts as SVG files beside them
    (e.g. for the README); returns the reports written."""
    written = [run_dir / "report.md"]
    write_text_safely(written[0], markdown)
    if html is not None:
        written.append(run_dir / "report.html")
        write_text_safely(written[1], html)
    for name, svg in (charts or {}).items():
        write_text_safely((run_dir / name), svg)
    return written
