"""`./test.sh ladder`: the serialisation ladder's options, settings and entry point."""

import argparse
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.modes.ladder.settings import QUICK_PAIRS, LadderSettings
from loadtest.modes.options import (
    add_apps,
    add_paired_load,
    enough_for_an_interval,
    paired_load_values,
)

SUMMARY = (
    "where the time goes, over HTTP: the serialisation ladder's eight rungs in each arm, each "
    "paired with its own app's response_model (~6 min; --quick ~2.5 min)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = LadderSettings()
    parser.description = (
        "Time the eight rungs of the serialisation ladder (/ladder/{rung}: eight ways to answer "
        "the same 100 posts) in each arm with the paired protocol: every rung next to its own "
        "app's response_model window, and next to the other app's same rung. About 6 minutes "
        f"with the defaults ({defaults.pairs} rounds), 2.5 with --quick ({QUICK_PAIRS} rounds). "
        "Results go to results/<UTC timestamp>-ladder/."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look in about 2.5 minutes: {QUICK_PAIRS} rounds, the fewest with a 95%% "
        "interval",
    )
    parser.add_argument(
        "--pairs",
        type=enough_for_an_interval("pairs"),
        help=f"rounds of four windows per rung (default {defaults.pairs}, --quick {QUICK_PAIRS}; "
        f"at least {MIN_PAIRS_FOR_CI}, the fewest with a 95%% interval)",
    )
    add_apps(parser, defaults.apps)
    add_paired_load(parser, defaults)


def settings_from(arguments: argparse.Namespace) -> LadderSettings:
    pairs = arguments.pairs or (QUICK_PAIRS if arguments.quick else LadderSettings.pairs)
    return replace(LadderSettings(), pairs=pairs, **paired_load_values(arguments))


def run(settings: LadderSettings, console: Console) -> Path:
    from loadtest.modes.ladder.runner import run_ladder

    return run_ladder(settings, console)
