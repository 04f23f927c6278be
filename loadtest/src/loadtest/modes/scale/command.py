"""`./test.sh scale`: the scale mode's options, settings and entry point."""

import argparse
from pathlib import Path

from rich.console import Console

from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.generated.shapes import DEFAULT_SHAPE, SHAPE_NAMES, SHAPES, checked_sizes
from loadtest.modes.options import (
    add_apps,
    add_no_pin,
    add_ports,
    add_results_dir,
    enough_for_an_interval,
    ports_from,
    seconds_between,
    size_list,
    whole_number,
)
from loadtest.modes.scale.settings import DEFAULT_PLAN, QUICK_PLAN, ScalePlan, ScaleSettings

SUMMARY = (
    "start-up and memory at scale: generated apps of 10, 100 and 500 models (two routes each) "
    "in each arm's own idiom, fresh processes, with defer_build as a variant (~6 min; --quick "
    "~1.5 min); --shape chain, recursive, generic, union or routes: the shapes users reported "
    "trouble with (2-9 min)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    shapes = "; ".join(
        f"{name}: {shape.summary} (sizes: {shape.size_label}, default "
        f"{','.join(map(str, shape.sizes))})"
        for name, shape in SHAPES.items()
    )
    parser.description = (
        "Generate apps of one shape in each arm's schema idiom, verify that every route answers "
        "its model's JSON, then start each as fresh processes in rotating order: import time, "
        "time to the first /health, memory idle, memory after one request to every route, the "
        f"first /openapi.json. Shapes: {shapes}. A process that takes longer than --bound is "
        "reported as over it, one that fails to start with its error, and the subject's larger "
        f"sizes are skipped. With the defaults ({DEFAULT_PLAN.processes} processes per subject "
        "and size) about 6 minutes for the service shape, 2 for union, 4 for routes, 3 for "
        "recursive, 5 for generic and 9 for chain; 1.5 to 2.5 minutes with --quick "
        f"({QUICK_PLAN.processes} process{'es' if QUICK_PLAN.processes != 1 else ''} per "
        "subject and size). Results go to results/<UTC timestamp>-scale/."
    )
    parser.add_argument(
        "--shape",
        choices=SHAPE_NAMES,
        default=DEFAULT_SHAPE,
        metavar="NAME",
        help=f"the models' shape: {', '.join(SHAPE_NAMES)} (default {DEFAULT_SHAPE})",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look: {QUICK_PLAN.processes} timed process per subject and size (no "
        "spread, no intervals)",
    )
    parser.add_argument(
        "--processes",
        type=enough_for_an_interval(
            "processes", note=" (only --quick times fewer: 1, a first look without intervals)"
        ),
        help=f"timed processes per subject and size, paired by round (default "
        f"{DEFAULT_PLAN.processes}; at least {MIN_PAIRS_FOR_CI}, the fewest that give the ratios "
        f"a 95%% interval; --quick times {QUICK_PLAN.processes}, without intervals)",
    )
    parser.add_argument(
        "--sizes",
        "--models",
        dest="sizes",
        type=size_list,
        metavar="N[,N...]",
        help="the shape's sizes, comma-separated: models (service, chain, recursive, generic), "
        "union members (union) or routes per model (routes); default: the shape's own",
    )
    add_variant_options(parser)
    parser.add_argument(
        "--bound",
        type=seconds_between(5, 3600),
        help="seconds a process may take, start, every route and /openapi.json (default: the "
        "shape's, 60)",
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


def add_variant_options(parser: argparse.ArgumentParser) -> None:
    """Which variants of each arm: defer_build, the shape's own, flat routes."""
    defer = parser.add_mutually_exclusive_group()
    defer.add_argument(
        "--defer-build",
        dest="defer_build",
        action="store_true",
        default=None,
        help="add the defer_build=True variants of the Pydantic 2 arms (the service shape's "
        "default)",
    )
    defer.add_argument(
        "--no-defer-build",
        dest="defer_build",
        action="store_false",
        help="leave out the defer_build=True variants",
    )
    parser.add_argument(
        "--no-variants",
        action="store_true",
        help="leave out the shape's own variants (union: discriminated; chain: backward only)",
    )
    parser.add_argument(
        "--flat-routes",
        action="store_true",
        help="add, for every arm, the same app with every route declared on the app itself "
        "(no APIRouter, no include_router): what nesting routers costs",
    )


def settings_from(arguments: argparse.Namespace) -> ScaleSettings:
    shape = SHAPES[arguments.shape]
    quick_or_default = QUICK_PLAN if arguments.quick else DEFAULT_PLAN
    default_sizes = shape.quick_sizes if arguments.quick else shape.sizes
    defer_build = shape.defer_build if arguments.defer_build is None else arguments.defer_build
    return ScaleSettings(
        apps=arguments.apps,
        shape=arguments.shape,
        sizes=checked_sizes(arguments.shape, arguments.sizes or default_sizes),
        defer_build=defer_build,
        flat=arguments.flat_routes,
        variants=() if arguments.no_variants else tuple(shape.variants),
        quick=arguments.quick,
        plan=ScalePlan(arguments.processes or quick_or_default.processes),
        seed=arguments.seed,
        bound_s=arguments.bound or shape.bound_s,
        ports=ports_from(arguments, arguments.apps),
        pin=not arguments.no_pin,
        results_dir=arguments.results_dir.resolve(),
    )


def run(settings: ScaleSettings, console: Console) -> Path:
    from loadtest.modes.scale.runner import run_scale

    return run_scale(settings, console)
