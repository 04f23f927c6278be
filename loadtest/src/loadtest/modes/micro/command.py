"""`./test.sh micro`: the micro-benchmarks' options, settings and entry point."""

import argparse
from pathlib import Path

from rich.console import Console

from loadtest.modes.micro.settings import DEFAULT_PLAN, MICRO_APPS, QUICK_PLAN, MicroSettings
from loadtest.modes.options import add_apps, add_no_pin, add_results_dir

SUMMARY = (
    "where the time goes, in-process: Pydantic's paths, JSON encoders and a container of "
    "records (pickle, marshal, JSON), in each arm's own environment, paired by round (~1.5 "
    "min; --quick ~20 s)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Time the Pydantic paths over the ladder's 100 posts in each arm's own environment, "
        "and JSON encoders and a container of records once, each beside a plain-Python "
        f"baseline and paired by round. About 1.5 minutes ({DEFAULT_PLAN.processes} processes "
        f"x {DEFAULT_PLAN.rounds} rounds per environment), 20 seconds with --quick. Results go "
        "to results/<UTC timestamp>-micro/."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look in about 20 seconds: {QUICK_PLAN.processes} processes x "
        f"{QUICK_PLAN.rounds} rounds",
    )
    add_apps(parser, MICRO_APPS)
    add_no_pin(parser, "the micro-benchmark processes to one CPU")
    add_results_dir(parser)


def settings_from(arguments: argparse.Namespace) -> MicroSettings:
    return MicroSettings(
        apps=arguments.apps,
        quick=arguments.quick,
        plan=QUICK_PLAN if arguments.quick else DEFAULT_PLAN,
        pin=not arguments.no_pin,
        results_dir=arguments.results_dir.resolve(),
    )


def run(settings: MicroSettings, console: Console) -> Path:
    from loadtest.modes.micro.runner import run_micro

    return run_micro(settings, console)
