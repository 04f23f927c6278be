"""`./test.sh sweep`: the payload sweep's options, settings and entry point."""

import argparse
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from commons.payloads import MAX_COMMENTS_PER_POST, MAX_PAYLOAD_ITEMS
from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.modes.options import (
    add_apps,
    add_paired_load,
    choice_list,
    enough_for_an_interval,
    paired_load_values,
    whole_number,
)
from loadtest.modes.sweep.settings import (
    QUICK_PAIRS,
    QUICK_SIZES,
    READ_SIZES,
    SHAPE_NAMES,
    SHAPES,
    WRITE_SIZES,
    SweepSettings,
)

SUMMARY = (
    "how the gain scales: flat and nested answers of 1 to 5,000 posts, bulk inserts and "
    "validate-only bodies of 1 to 1,000, every arm in paired windows (~9 min; --quick ~2.5 min)"
)


def size_list(text: str) -> tuple[int, ...]:
    sizes = []
    for part in text.split(","):
        try:
            value = int(part.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r}: sizes are whole numbers, comma-separated"
            ) from None
        if not 1 <= value <= MAX_PAYLOAD_ITEMS:
            raise argparse.ArgumentTypeError(f"{value} must be 1 to {MAX_PAYLOAD_ITEMS:,}")
        sizes.append(value)
    return tuple(sorted(set(sizes)))


def comments_per_post(text: str) -> int:
    value = whole_number(text)
    if not 0 <= value <= MAX_COMMENTS_PER_POST:
        raise argparse.ArgumentTypeError(f"{value} must be 0 to {MAX_COMMENTS_PER_POST}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = SweepSettings()
    parser.description = (
        "Sweep the payload: every cell (shape, size) in every arm with the paired protocol, "
        "each cell's windows sized to its requests. Shapes: "
        + "; ".join(f"{shape}: {what}" for shape, what in SHAPES.items())
        + f". Sizes: reads {', '.join(map(str, READ_SIZES))}; writes "
        f"{', '.join(map(str, WRITE_SIZES))}. About 9 minutes with the defaults "
        f"({defaults.pairs} rounds), 2.5 with --quick (sizes {', '.join(map(str, QUICK_SIZES))}, "
        f"{QUICK_PAIRS} rounds). --users caps a cell's users and --window is its shortest window: "
        "cells with slow requests get fewer users and longer windows (docs/sweep.md). Results "
        "go to results/<UTC timestamp>-sweep/."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look in about 2.5 minutes: sizes {','.join(map(str, QUICK_SIZES))} only, "
        f"{QUICK_PAIRS} rounds (the fewest with a 95%% interval)",
    )
    parser.add_argument(
        "--pairs",
        type=enough_for_an_interval("pairs"),
        help=f"rounds; in each, every cell gives every arm one window (default {defaults.pairs}, "
        f"--quick {QUICK_PAIRS}; at least {MIN_PAIRS_FOR_CI}, the fewest with a 95%% interval)",
    )
    add_apps(parser, defaults.apps)
    parser.add_argument(
        "--shapes",
        type=choice_list(SHAPE_NAMES),
        default=defaults.shapes,
        help=f"shapes to sweep, comma-separated, from {', '.join(SHAPE_NAMES)} (default all)",
    )
    parser.add_argument(
        "--sizes",
        type=size_list,
        help="posts per answer or body, comma-separated, 1 to "
        f"{MAX_PAYLOAD_ITEMS:,} (writes take those up to 1,000; default: each shape's own)",
    )
    parser.add_argument(
        "--comments",
        type=comments_per_post,
        default=defaults.comments,
        help=f"comments per post in the nested shape, 0-{MAX_COMMENTS_PER_POST} "
        f"(default {defaults.comments})",
    )
    # --window: the shortest window; cells with slow requests get longer ones (timetable.py).
    add_paired_load(parser, defaults, load_processes=False)


def settings_from(arguments: argparse.Namespace) -> SweepSettings:
    pairs = arguments.pairs or (QUICK_PAIRS if arguments.quick else SweepSettings.pairs)
    return replace(
        SweepSettings(),
        pairs=pairs,
        sizes=arguments.sizes or (QUICK_SIZES if arguments.quick else None),
        shapes=arguments.shapes,
        comments=arguments.comments,
        **paired_load_values(arguments),
    )


def run(settings: SweepSettings, console: Console) -> Path:
    from loadtest.modes.sweep.runner import run_sweep

    return run_sweep(settings, console)
