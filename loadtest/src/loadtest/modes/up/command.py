"""`./test.sh up`: its options, settings and entry point."""

import argparse
import shutil
import tempfile
from pathlib import Path

from rich.console import Console

from loadtest.lab.errors import LabError
from loadtest.load.scenarios import READ_PER_PAGE
from loadtest.modes.options import (
    add_apps,
    add_dataset_size,
    add_ports,
    add_users,
    add_workers,
    port_number,
    ports_from,
)
from loadtest.modes.up.settings import LOCUST_WEB_PORT, USER_CLASSES, UpSettings

SUMMARY = (
    "PostgreSQL with the dataset, every arm and the locust web UI loading one scenario, until "
    "Ctrl-C (ready in about 12 s)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = UpSettings()
    parser.description = (
        "Start PostgreSQL (embedded, or DATABASE_URL's) with the dataset, every arm, and "
        "locust's web UI loading one scenario (--scenario), for browsing /docs and loading one "
        "arm by hand; everything stops on Ctrl-C. Ready in about 12 seconds (the posts' comments "
        "and tags take 3-4 of them)."
    )
    add_apps(parser)
    add_users(parser, defaults.users)
    add_dataset_size(parser, READ_PER_PAGE, defaults.dataset_size)
    add_workers(parser)
    add_ports(parser)
    parser.add_argument(
        "--scenario",
        choices=tuple(USER_CLASSES),
        default=defaults.scenario,
        help="the scenario the web UI loads, its one user class ("
        + ", ".join(f"{name}: {user_class}" for name, user_class in USER_CLASSES.items())
        + f"; default {defaults.scenario}): one at a time, as the benchmark measures them",
    )
    parser.add_argument(
        "--ui-port",
        type=port_number,
        default=LOCUST_WEB_PORT,
        metavar="PORT",
        help=f"port of the locust web UI (default {LOCUST_WEB_PORT})",
    )


def settings_from(arguments: argparse.Namespace) -> UpSettings:
    ports = ports_from(arguments, arguments.apps)
    for arm in arguments.apps:
        if ports[arm] == arguments.ui_port:
            raise LabError(f"--ui-port and --port-{arm} are both {ports[arm]}")
    return UpSettings(
        apps=arguments.apps,
        users=arguments.users or UpSettings.users,
        dataset_size=arguments.dataset_size,
        workers=arguments.workers,
        ports=ports,
        ui_port=arguments.ui_port,
        scenario=arguments.scenario,
    )


def run(settings: UpSettings, console: Console) -> None:
    """Logs go to a temporary folder: removed on Ctrl-C, kept when something failed."""
    from loadtest.lab.database import check_configured_url
    from loadtest.modes.up.runner import run_interactive

    check_configured_url()
    log_dir = Path(tempfile.mkdtemp(prefix="pglab-up-"))
    keep_logs = False
    try:
        run_interactive(settings, console, log_dir)
    except LabError:
        keep_logs = any(log_dir.iterdir())  # something failed: its logs say why
        raise
    finally:
        if not keep_logs:
            shutil.rmtree(log_dir, ignore_errors=True)
