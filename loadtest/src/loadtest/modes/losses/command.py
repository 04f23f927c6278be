"""`./test.sh losses`: its options, settings and entry point."""

import argparse
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from loadtest.modes.options import add_run_dirs, run_dirs_from

SUMMARY = (
    "RUN_DIR...: where Pydantic 2 costs more, read from scale, shapes and sweep runs: the "
    "losses two runs agree on, worst first (seconds)"
)


@dataclass(frozen=True)
class LossesSettings:
    run_dirs: tuple[Path, ...]
    markdown: bool = False
    summary: bool = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Read runs of the scale, shapes and sweep modes (their results.json; nothing is "
        "measured) and list every figure where Pydantic 2 costs more than v1: its 95% interval "
        "wholly above 1 (slower, more memory, slower start-up), or v2 did not finish where v1 "
        "did. A figure is listed only when two runs or more show the loss; those seen once "
        "are counted apart. Give two runs of each mode you want examined. Takes seconds."
    )
    add_run_dirs(parser, "run folders, e.g. results/*-scale results/*-shapes")
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="print the tables as Markdown (as the README's) instead of for the terminal",
    )
    parser.add_argument(
        "--summary",
        action="store_true",
        help="the headline measures only, every comparison with v1 in one row (the README's table)",
    )


def settings_from(arguments: argparse.Namespace) -> LossesSettings:
    return LossesSettings(run_dirs_from(arguments), arguments.markdown, arguments.summary)


def run(settings: LossesSettings, console: Console) -> None:
    from loadtest.modes.losses.runner import show_losses

    # A results.json that does not hold what the lab writes is one line naming the file
    # (output/results_file.py's reporting_from).
    show_losses(settings.run_dirs, settings.markdown, console, settings.summary)
