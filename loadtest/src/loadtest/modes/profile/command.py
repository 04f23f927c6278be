"""`./test.sh profile`: the profile's options, settings and entry point."""

import argparse
from pathlib import Path

from rich.console import Console

from loadtest.load.scenarios import READ_PER_PAGE
from loadtest.modes.options import (
    add_apps,
    add_dataset_size,
    add_no_pin,
    add_results_dir,
    positive_int,
)
from loadtest.modes.profile.settings import (
    PROFILE_APPS,
    PROFILE_REQUESTS,
    QUICK_PROFILE_REQUESTS,
    ProfileSettings,
)

SUMMARY = (
    "where the time goes, per request: READ synthetic and READ under cProfile in each arm, "
    "time sorted into buckets (~2 min)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Drive each arm in-process, in its own environment, through READ synthetic and READ "
        f"under cProfile ({PROFILE_REQUESTS:,} requests each, {QUICK_PROFILE_REQUESTS} with "
        "--quick) and sort each request's time into buckets a reader knows (Pydantic, FastAPI's "
        "encoder, JSON, the database, the app, the framework). About 2 minutes. Results, with "
        "the .prof files, go to results/<UTC timestamp>-profile/."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_PROFILE_REQUESTS} requests per arm and scenario",
    )
    parser.add_argument(
        "--requests",
        type=positive_int,
        help=f"requests profiled per arm and scenario (default {PROFILE_REQUESTS:,}, --quick "
        f"{QUICK_PROFILE_REQUESTS})",
    )
    add_apps(parser, PROFILE_APPS)
    add_dataset_size(parser, READ_PER_PAGE, ProfileSettings.dataset_size)
    add_no_pin(parser, "the profiled app and PostgreSQL to separate CPUs")
    add_results_dir(parser)


def settings_from(arguments: argparse.Namespace) -> ProfileSettings:
    quick = QUICK_PROFILE_REQUESTS if arguments.quick else PROFILE_REQUESTS
    return ProfileSettings(
        apps=arguments.apps,
        requests=arguments.requests or quick,
        dataset_size=arguments.dataset_size,
        pin=not arguments.no_pin,
        results_dir=arguments.results_dir.resolve(),
    )


def run(settings: ProfileSettings, console: Console) -> Path:
    from loadtest.modes.profile.runner import run_profile

    return run_profile(settings, console)
