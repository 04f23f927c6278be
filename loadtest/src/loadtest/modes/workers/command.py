"""`./test.sh workers`: the workers mode's options, settings and entry point."""

import argparse
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.generated.shapes import DEFAULT_SHAPE, SHAPE_NAMES, checked_sizes
from loadtest.lab.errors import LabError
from loadtest.modes.options import (
    add_apps,
    add_no_pin,
    add_ports,
    add_results_dir,
    choice_list,
    ports_from,
    positive_int,
    seconds_between,
    size_list,
    whole_number,
)
from loadtest.modes.workers.servers import SERVER_NAMES, SERVERS
from loadtest.modes.workers.settings import (
    CHECK_LIMIT_MIB,
    DEFAULT_APPS,
    DEFAULT_ROUNDS,
    DEFAULT_SERVERS,
    DEFAULT_SIZES,
    DEFAULT_WORKERS,
    LIMITS_MIB,
    LOAD_S,
    MAX_WORKERS,
    QUICK_LOAD_S,
    QUICK_WORKERS,
    Target,
    WorkersSettings,
)

SUMMARY = (
    "several workers per arm: uvicorn --workers N and gunicorn --preload (with and without "
    "gc.freeze), N = 1, 2, 4, on a generated 100-model app: every worker's memory (PSS), "
    "start-up, how many workers fit in 512 MiB, 1 and 2 GiB, checked under a real memory "
    "limit (~5 min; --quick ~3 min)"
)


def number_list(what: str, low: int, high: int) -> Callable[[str], tuple[int, ...]]:
    def parse(text: str) -> tuple[int, ...]:
        numbers = []
        for part in text.split(","):
            try:
                number = int(part)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{part!r} is not a whole number") from None
            if not low <= number <= high:
                raise argparse.ArgumentTypeError(f"{number} {what}: choose {low} to {high}")
            numbers.append(number)
        if len(set(numbers)) != len(numbers):
            raise argparse.ArgumentTypeError(f"{text!r} names a number twice")
        return tuple(sorted(numbers))

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    servers = "; ".join(f"{name}: {server.summary}" for name, server in SERVERS.items())
    parser.description = (
        "Serve each arm's app with N worker processes, one process tree at a time in rotating "
        "rounds, and measure the time until every worker is ready and the tree's memory: PSS "
        "(shared pages split between the processes that share them), idle and after every "
        "route has run in every worker (proven by the PID each answer names). From the "
        "memory, how many workers fit in each limit, and a check: the largest number "
        "predicted for --check-limit started inside a memory cgroup of that size and loaded. "
        f"Servers: {servers}. About 5 minutes with the defaults, 3 with --quick; a 500-model "
        "app, 8 workers or every server take longer (the run says how long a round takes "
        "after its first). Results go to results/<UTC timestamp>-workers/."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look: 1 round, {','.join(map(str, QUICK_WORKERS))} workers, "
        f"{QUICK_LOAD_S:g} s of load in the check (about 3 minutes)",
    )
    add_what_to_serve(parser)
    add_how_to_measure(parser)
    add_apps(parser, default=DEFAULT_APPS)
    add_ports(parser)
    add_no_pin(
        parser,
        "the servers to the apps' half of the CPUs and the runner, which calls them, to the other",
    )
    add_results_dir(parser)


def add_what_to_serve(parser: argparse.ArgumentParser) -> None:
    """What is served: worker counts, servers, the generated app and the lab's."""
    parser.add_argument(
        "--workers",
        type=number_list("workers", 1, MAX_WORKERS),
        metavar="N[,N...]",
        help=f"worker counts, comma-separated, 1-{MAX_WORKERS} (default "
        f"{','.join(map(str, DEFAULT_WORKERS))}; the fit needs two counts of 2 or more)",
    )
    parser.add_argument(
        "--servers",
        type=choice_list(SERVER_NAMES),
        default=DEFAULT_SERVERS,
        metavar="NAME[,NAME...]",
        help=f"from {', '.join(SERVER_NAMES)} (default {','.join(DEFAULT_SERVERS)})",
    )
    parser.add_argument(
        "--models",
        type=size_list,
        metavar="N[,N...]",
        help="the generated app's size on --shape's axis, as scale's --sizes: models, or "
        "union members (union: 100 models hold the union), or routes per model (routes) "
        f"(default {','.join(map(str, DEFAULT_SIZES))}; scale's sizes are 10,100,500)",
    )
    parser.add_argument(
        "--shape",
        choices=SHAPE_NAMES,
        default=DEFAULT_SHAPE,
        metavar="NAME",
        help=f"the generated app's shape, as scale's: {', '.join(SHAPE_NAMES)} (default "
        f"{DEFAULT_SHAPE})",
    )
    parser.add_argument(
        "--lab-app",
        action="store_true",
        help="serve the lab's own app too (over the embedded PostgreSQL, or DATABASE_URL)",
    )
    parser.add_argument(
        "--only-lab-app",
        action="store_true",
        help="serve the lab's own app only, no generated app",
    )


def add_how_to_measure(parser: argparse.ArgumentParser) -> None:
    """How it is measured: rounds, memory limits and their check, the bound, the seed."""
    parser.add_argument(
        "--rounds",
        type=positive_int,
        help=f"rounds of every subject (default {DEFAULT_ROUNDS}; {MIN_PAIRS_FOR_CI} or more "
        "give the ratios 95%% intervals; --quick runs 1)",
    )
    parser.add_argument(
        "--limits",
        type=number_list("MiB", 64, 1024 * 1024),
        default=LIMITS_MIB,
        metavar="MIB[,MIB...]",
        help=f"memory limits the fit is read at (default {','.join(map(str, LIMITS_MIB))})",
    )
    check = parser.add_mutually_exclusive_group()
    check.add_argument(
        "--check-limit",
        type=number_list("MiB", 64, 1024 * 1024),
        metavar="MIB",
        help=f"the limit the prediction is checked under, any limit: it is read off the fit's "
        f"line, need not be one of --limits (default {CHECK_LIMIT_MIB}; needs root or a "
        "delegated cgroup)",
    )
    check.add_argument(
        "--no-limit-check", action="store_true", help="skip the check under a memory limit"
    )
    parser.add_argument(
        "--load",
        type=seconds_between(1, 600),
        metavar="SECONDS",
        help=f"seconds of load in the limit check (default {LOAD_S:g}; --quick {QUICK_LOAD_S:g})",
    )
    parser.add_argument(
        "--bound",
        type=seconds_between(5, 3600),
        default=60.0,
        help="seconds a tree may take to have every worker ready, and again to serve every "
        "route in every worker; the supervisors' own timeouts are set to it (default 60)",
    )
    parser.add_argument(
        "--seed",
        type=whole_number,
        default=0,
        help="the generator's seed, as scale's (default 0)",
    )


def settings_from(arguments: argparse.Namespace) -> WorkersSettings:
    if arguments.only_lab_app and (arguments.models or arguments.shape != DEFAULT_SHAPE):
        raise LabError("--only-lab-app serves no generated app: drop --models and --shape")
    sizes = checked_sizes(arguments.shape, arguments.models or DEFAULT_SIZES, "--models")
    targets = [] if arguments.only_lab_app else [Target(arguments.shape, size) for size in sizes]
    if arguments.lab_app or arguments.only_lab_app:
        targets.append(Target(lab=True))
    workers = arguments.workers or (QUICK_WORKERS if arguments.quick else DEFAULT_WORKERS)
    check_limit = None if arguments.no_limit_check else CHECK_LIMIT_MIB
    if arguments.check_limit:
        if len(arguments.check_limit) > 1:
            raise LabError("--check-limit takes one limit")
        check_limit = arguments.check_limit[0]
    if check_limit is not None and len([n for n in workers if n >= 2]) < 2:
        raise LabError(
            f"--workers {','.join(map(str, workers))}: the fit and its limit check need two "
            "worker counts of 2 or more, e.g. --workers 2,4 (--no-limit-check measures these "
            "counts without a fit)"
        )
    return WorkersSettings(
        apps=arguments.apps,
        targets=tuple(targets),
        servers=arguments.servers,
        workers=workers,
        rounds=arguments.rounds or (1 if arguments.quick else DEFAULT_ROUNDS),
        quick=arguments.quick,
        limits_mib=arguments.limits,
        check_limit_mib=check_limit,
        load_s=arguments.load or (QUICK_LOAD_S if arguments.quick else LOAD_S),
        bound_s=arguments.bound,
        seed=arguments.seed,
        ports=ports_from(arguments, arguments.apps),
        pin=not arguments.no_pin,
        results_dir=arguments.results_dir.resolve(),
    )


def run(settings: WorkersSettings, console: Console) -> Path:
    from loadtest.modes.workers.runner import run_workers

    return run_workers(settings, console)
