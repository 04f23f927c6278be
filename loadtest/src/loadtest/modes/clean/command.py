"""`./test.sh clean`: stop what a run killed with `kill -9` left behind (lab/leftovers.py)."""

import argparse
from dataclasses import dataclass

from rich.console import Console

from loadtest.lab.leftovers import find_leftovers, stop_leftovers

SUMMARY = "stop and remove what an earlier run killed outright left behind, nothing else (seconds)"


@dataclass(frozen=True)
class CleanSettings:
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Stop the processes an earlier run of this lock left when it was killed outright "
        "(kill -9): its PostgreSQL, apps and locust, each still marked as that run's; and "
        "remove its embedded PostgreSQL's data folders. Nothing else is touched: a run that "
        "is alive, or anything it did not start, is left alone. Takes seconds."
    )


def settings_from(_arguments: argparse.Namespace) -> CleanSettings:
    return CleanSettings()


def run(_settings: CleanSettings, console: Console) -> None:
    leftovers = find_leftovers()
    if not leftovers:
        console.print("Nothing an earlier run started is left.")
        return
    summary = leftovers.summary()
    removed = stop_leftovers(leftovers)
    console.print(f"Stopped {summary}.")
    if removed:
        console.print(f"Removed {', '.join(map(str, removed))}.")
