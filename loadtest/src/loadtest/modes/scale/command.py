"""`./test.sh scale`: the scale mode's options, settings and entry point."""

import argparse
from pathlib import Path

from rich.console import Console

from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.modes.options import (
    add_apps,
    add_no_pin,
    add_ports,
    add_results_dir,
    enough_for_an_interval,
    ports_from,
    whole_number,
)
from loadtest.modes.scale.settings import (
    DEFAULT_PLAN,
    MAX_MODELS,
    MODEL_COUNTS,
    QUICK_PLAN,
    ScalePlan,
    ScaleSettings,
)

SUMMARY = (
    "start-up and memory at scale: generated apps of 10, 100 and 500 models (two routes each) "
    "in each arm's own idiom, fresh processes, with defer_build as a variant (~6 min; --quick "
    "~1.5 min)"
)


def model_counts(text: str) -> tuple[int, ...]:
    counts = []
    for part in text.split(","):
        try:
            count = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part!r} is not a whole number") from None
        if not 1 <= count <= MAX_MODELS:
            raise argparse.ArgumentTypeError(f"{count} models: choose 1 to {MAX_MODELS}")
        counts.append(count)
    if len(set(counts)) != len(counts):
        raise argparse.ArgumentTypeError(f"{text!r} names a size twice")
    return tuple(sorted(counts))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Generate apps of M models (nested models, optional fields, enums, lists, datetimes, "
        "constrained strings; a validator every third model, a computed field every fourth; "
        "two routes per model, ten models per APIRouter) in each arm's schema idiom, verify "
        "that every route answers, then start each as fresh processes in rotating order: "
        "import time, time to the first /health, memory idle, memory after one request to "
        "every route, the first /openapi.json. Arms whose models are Pydantic 2's also run "
        "with defer_build=True. About 6 minutes with the defaults "
        f"({DEFAULT_PLAN.processes} processes per arm and size), 1.5 with --quick "
        f"({QUICK_PLAN.processes}). Results go to results/<UTC timestamp>-scale/."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look in about 1.5 minutes: {QUICK_PLAN.processes} timed process per arm "
        "and size (no spread, no intervals)",
    )
    parser.add_argument(
        "--processes",
        type=enough_for_an_interval(
            "processes", note=" (only --quick times fewer: 1, a first look without intervals)"
        ),
        help=f"timed processes per arm and size, paired by round (default "
        f"{DEFAULT_PLAN.processes}; at least {MIN_PAIRS_FOR_CI}, the fewest that give the ratios "
        f"a 95%% interval; --quick times {QUICK_PLAN.processes}, without intervals)",
    )
    parser.add_argument(
        "--models",
        type=model_counts,
        default=MODEL_COUNTS,
        metavar="M[,M...]",
        help=f"app sizes, in models (default {','.join(map(str, MODEL_COUNTS))}; at most "
        f"{MAX_MODELS})",
    )
    parser.add_argument(
        "--no-defer-build",
        action="store_true",
        help="leave out the defer_build=True variants of the Pydantic 2 arms",
    )
    parser.add_argument(
        "--flat-routes",
        action="store_true",
        help="add, for every arm, the same app with every route declared on the app itself "
        "(no APIRouter, no include_router): what nesting routers costs",
    )
    parser.add_argument(
        "--seed",
        type=whole_number,
        default=0,
        help="the generator's seed: the same seed gives the same apps (default 0)",
    )
    add_apps(parser)
    add_ports(parser)
    add_no_pin(parser, "the timed app processes to the apps' half of the CPUs")
    add_results_dir(parser)


def settings_from(arguments: argparse.Namespace) -> ScaleSettings:
    quick_or_default = QUICK_PLAN if arguments.quick else DEFAULT_PLAN
    return ScaleSettings(
        apps=arguments.apps,
        models=arguments.models,
        defer_build=not arguments.no_defer_build,
        flat=arguments.flat_routes,
        quick=arguments.quick,
        plan=ScalePlan(arguments.processes or quick_or_default.processes),
        seed=arguments.seed,
        ports=ports_from(arguments, arguments.apps),
        pin=not arguments.no_pin,
        results_dir=arguments.results_dir.resolve(),
    )


def run(settings: ScaleSettings, console: Console) -> Path:
    from loadtest.modes.scale.runner import run_scale

    return run_scale(settings, console)
