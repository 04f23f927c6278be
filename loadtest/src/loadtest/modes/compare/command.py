"""`./test.sh compare FILE`: the options, the settings (the file's, then the command line's)
and the entry point."""

import argparse
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.analysis.clusters import MIN_REPEATS
from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.lab.errors import LabError
from loadtest.modes.compare.file import read_compare_file
from loadtest.modes.compare.settings import (
    BUDGET_S,
    PAIRS_PER_REPEAT,
    PILOT_REPEATS,
    PRECISION,
    CompareSettings,
)
from loadtest.modes.options import (
    add_no_pin,
    add_results_dir,
    enough_for_an_interval,
    fraction_between,
    minutes_between,
    positive_int,
    seconds_between,
)
from loadtest.pipeline.settings import QUICK, BenchmarkSettings

CALLED_FROM = "LAB_CALLED_FROM"  # test.sh: where it was called from
SUMMARY = (
    "your own services, declared in a TOML file (examples/lab.toml): verified, a timetable "
    "fitted to them, then the benchmark's paired windows in repeats until every ratio's 95% "
    "CI is within ±5% or the budget (10 minutes) is spent; --quick: one repeat"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = CompareSettings()
    parser.description = (
        "Measure any two or more services the way the benchmark measures the lab's apps: "
        "FILE declares the arms (a command to start, or a URL already running), the scenarios "
        "and the options (docs/compare.md). Every scenario is verified on every arm and the "
        "answers compared field by field before timing; results go to "
        "results/<UTC timestamp>-compare/."
    )
    parser.add_argument(
        "file",
        type=Path,
        metavar="FILE",
        help="the compare file (TOML), relative to where ./test.sh is called from",
    )
    add_timetable_options(parser, defaults, QUICK)
    add_permission_options(parser)
    add_results_dir(parser)


def add_timetable_options(
    parser: argparse.ArgumentParser, defaults: CompareSettings, quick: BenchmarkSettings
) -> None:
    """How long and how precisely: quick, pairs, repeats, precision, budget, windows, users."""
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look: {quick.pairs} pairs, {quick.repeats} repeat, {quick.warmup_s:g}s "
        f"warm-up, {quick.startup_samples} start-ups per arm (the file's options still apply "
        "where it sets them)",
    )
    parser.add_argument(
        "--pairs",
        type=enough_for_an_interval("pairs"),
        help=f"rounds per scenario and repeat (default: the file's, else {PAIRS_PER_REPEAT}; at "
        f"least {MIN_PAIRS_FOR_CI})",
    )
    parser.add_argument(
        "--repeats",
        type=positive_int,
        help=f"the pilot: repeats, each with fresh processes of the arms it starts, after which "
        f"more are run where --precision needs them (default: the file's, else "
        f"{PILOT_REPEATS}; from {MIN_REPEATS} on, every interval covers a rerun)",
    )
    parser.add_argument(
        "--precision",
        type=fraction_between(0, 0.5),
        help=f"the target: repeats are added after the pilot until every ratio's 95%% interval "
        f"is expected within ±this, or the budget is spent (default {PRECISION:g}; 0: the "
        "pilot only)",
    )
    parser.add_argument(
        "--budget",
        type=minutes_between(1, 24 * 60),
        help=f"minutes the whole run may take, pilot included, before it stops adding repeats "
        f"(default {BUDGET_S / 60:g})",
    )
    parser.add_argument(
        "--window",
        type=seconds_between(2 * defaults.settle_s, 600),
        help=f"seconds of one arm's window (default: the file's, else {defaults.window_s:g})",
    )
    parser.add_argument(
        "--warmup",
        type=seconds_between(1, 3600),
        help=f"discarded warm-up seconds per arm and scenario (default: the file's, else "
        f"{defaults.warmup_s:g})",
    )
    parser.add_argument(
        "--users",
        type=positive_int,
        help=f"concurrent locust users (default: the file's, else {defaults.users})",
    )


def add_permission_options(parser: argparse.ArgumentParser) -> None:
    """What a run lets pass, and what it skips."""
    parser.add_argument(
        "--allow-different",
        action="store_true",
        help="time the arms even where their answers differ from the baseline's after "
        "normalising (the differences are kept in the results)",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="let arms the file sets on another host (with allow_remote = true in the file) be "
        "loaded; without both, only this machine's addresses are",
    )
    add_no_pin(
        parser, "the arms the run starts, and the load generator with PostgreSQL, to separate CPUs"
    )
    parser.add_argument("--no-calibration", action="store_true", help="skip measuring locust first")
    parser.add_argument(
        "--no-fit",
        action="store_true",
        help="time every scenario with the file's, the command line's or the benchmark's users, "
        "window and settle, without first fitting them to the service (docs/compare.md)",
    )


def settings_from(arguments: argparse.Namespace) -> CompareSettings:
    """The benchmark's defaults (or --quick's), then the file's options, then the command
    line's; a bad file fails here, before anything starts."""
    path = Path(os.environ.get(CALLED_FROM, ".")) / arguments.file  # absolute: as given
    file = read_compare_file(path, allow_remote=arguments.allow_remote)
    base = QUICK if arguments.quick else CompareSettings()
    values: dict[str, Any] = {
        name: getattr(base, name) for name in ("pairs", "repeats", "warmup_s", "startup_samples")
    }
    if arguments.quick:
        values["precision"] = 0.0  # a first look: its one repeat, no more
    values |= file.options
    explicit = {
        "pairs": arguments.pairs,
        "repeats": arguments.repeats,
        "window_s": arguments.window,
        "warmup_s": arguments.warmup,
        "users": arguments.users,
        "precision": arguments.precision,
        "budget_s": arguments.budget * 60 if arguments.budget is not None else None,
    }
    values |= {key: value for key, value in explicit.items() if value is not None}
    values["set_by_hand"] = tuple(
        name for name in ("users", "window_s", "settle_s") if name in values
    )
    # With users, window and settle all set, nothing is left to fit: no probe either.
    if arguments.no_fit or len(values["set_by_hand"]) == 3:
        values["fit"] = False
    if arguments.no_pin:
        values["pin"] = False
    if arguments.no_calibration:
        values["calibrate"] = False
    plan = file.plan
    settings = CompareSettings(
        file=file,
        allow_different=arguments.allow_different,
        apps=plan.arms,
        scenarios=tuple(scenario.name for scenario in plan.scenarios),
        ports={s.name: s.port for s in plan.services if s.port is not None},
        dataset_size=file.dataset_size or 0,
        results_dir=arguments.results_dir.resolve(),
    )
    settings = replace(settings, **values)
    if settings.window_s < 2 * settings.settle_s:
        raise LabError(
            f"--window {settings.window_s:g} leaves too little after the file's settle_s "
            f"{settings.settle_s:g} (at least twice it)"
        )
    return settings


def run(settings: CompareSettings, console: Console) -> Path:
    from loadtest.modes.compare.runner import run_compare

    return run_compare(settings, console)
