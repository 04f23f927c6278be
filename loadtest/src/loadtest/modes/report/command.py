"""`./test.sh report`: its options, settings and entry point."""

import argparse
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from loadtest.lab.errors import LabError
from loadtest.lab.paths import DEFAULT_RESULTS_DIR
from loadtest.modes.options import add_results_dir, add_run_dirs, run_dirs_from

SUMMARY = (
    "RUN_DIR [RUN_DIR]: rebuild a run's report.md (and report.html) from its results.json, or "
    "compare two benchmark runs (seconds)"
)


@dataclass(frozen=True)
class ReportSettings:
    run_dirs: tuple[Path, ...]
    results_dir: Path = DEFAULT_RESULTS_DIR


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Rebuild a run's reports from its results.json alone (any mode's run, including runs "
        "written by earlier versions of the lab), or compare two benchmark runs: their ratios, "
        "start-up and memory side by side, in the terminal and in "
        "results/compare-A-vs-B.html. Takes seconds."
    )
    add_run_dirs(parser, "a run folder (e.g. results/latest), or two to compare")
    add_results_dir(parser)


def settings_from(arguments: argparse.Namespace) -> ReportSettings:
    if len(arguments.run_dirs) > 2:
        raise LabError(
            "report takes one run directory (rebuild its reports) or two (compare them), e.g. "
            "./test.sh report results/latest"
        )
    return ReportSettings(run_dirs_from(arguments), arguments.results_dir.resolve())


def run(settings: ReportSettings, console: Console) -> Path:
    from loadtest.modes.report.runner import compare, rebuild

    # A results.json of a readable version whose content does not match it is one line naming
    # the file (output/results_file.py's reporting_from).
    try:
        if len(settings.run_dirs) == 1:
            return rebuild(settings.run_dirs[0], console)
        return compare(settings.run_dirs, settings.results_dir, console)
    except OSError as error:
        raise LabError(f"cannot write the report: {error}".splitlines()[0]) from None
