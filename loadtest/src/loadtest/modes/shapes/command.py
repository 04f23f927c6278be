"""`./test.sh shapes`: the request-path shapes' options, settings and entry point."""

import argparse
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from loadtest.modes.options import (
    add_apps,
    add_paired_load,
    choice_list,
    enough_for_an_interval,
    paired_load_values,
)
from loadtest.modes.shapes.app import MAX_DEPTH, MAX_ITEMS, MEMBERS
from loadtest.modes.shapes.cells import KINDS
from loadtest.modes.shapes.settings import QUICK, QUICK_PAIRS, ShapesSettings

SUMMARY = (
    "the model shapes users reported trouble with, on the request path: unions of 2 and 20 "
    "members (plain and discriminated), recursive trees, parse_obj_as against a reused "
    "TypeAdapter, every arm in paired windows (~6 min; --quick ~3)"
)


def bounded_list(low: int, high: int) -> Callable[[str], tuple[int, ...]]:
    def parse(text: str) -> tuple[int, ...]:
        values = []
        for part in text.split(","):
            try:
                value = int(part.strip())
            except ValueError:
                raise argparse.ArgumentTypeError(f"{part!r} is not a whole number") from None
            if not low <= value <= high:
                raise argparse.ArgumentTypeError(f"{value} must be {low} to {high:,}")
            values.append(value)
        return tuple(sorted(set(values)))

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = ShapesSettings()
    parser.description = (
        "Generate an app in each arm's schema idiom with the shapes users reported trouble "
        "with after moving to Pydantic 2, verify that every arm answers every cell alike (the "
        "union's members chosen alike), then time every cell with the paired protocol. Cells: "
        + "; ".join(f"{kind}: {what}" for kind, what in KINDS.items())
        + f". About 6 minutes with the defaults ({defaults.pairs} rounds), 3 with --quick. "
        "Results go to results/<UTC timestamp>-shapes/."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look in about 3 minutes: smaller cells, {QUICK_PAIRS} rounds (the fewest "
        "with a 95%% interval)",
    )
    parser.add_argument(
        "--pairs",
        type=enough_for_an_interval("pairs"),
        help=f"rounds; in each, every cell gives every arm one window (default {defaults.pairs}, "
        f"--quick {QUICK_PAIRS})",
    )
    add_apps(parser, defaults.apps)
    parser.add_argument(
        "--members",
        type=choice_list(tuple(map(str, MEMBERS))),
        help=f"union sizes, from {', '.join(map(str, MEMBERS))} (default "
        f"{','.join(map(str, defaults.members))})",
    )
    parser.add_argument(
        "--union-sizes",
        type=bounded_list(1, MAX_ITEMS),
        help=f"members the union reads answer (default {','.join(map(str, defaults.union_sizes))})",
    )
    parser.add_argument(
        "--validate-sizes",
        type=bounded_list(1, MAX_ITEMS),
        help=f"members the union bodies send (default "
        f"{','.join(map(str, defaults.validate_sizes))})",
    )
    parser.add_argument(
        "--tree-depths",
        type=bounded_list(1, MAX_DEPTH),
        help=f"levels of the trees, two children a node (default "
        f"{','.join(map(str, defaults.tree_depths))})",
    )
    parser.add_argument(
        "--row-sizes",
        type=bounded_list(1, MAX_ITEMS),
        help=f"rows the parse_obj_as cells validate (default "
        f"{','.join(map(str, defaults.row_sizes))})",
    )
    # No PostgreSQL: the generated app keeps nothing.
    add_paired_load(
        parser,
        defaults,
        load_processes=False,
        pinned="the apps and the load generator to separate CPUs",
    )


def settings_from(arguments: argparse.Namespace) -> ShapesSettings:
    settings = QUICK if arguments.quick else ShapesSettings()
    explicit = {
        "pairs": arguments.pairs,
        "members": tuple(int(value) for value in arguments.members) if arguments.members else None,
        "union_sizes": arguments.union_sizes,
        "validate_sizes": arguments.validate_sizes,
        "tree_depths": arguments.tree_depths,
        "row_sizes": arguments.row_sizes,
    }
    return replace(
        settings,
        **{key: value for key, value in explicit.items() if value is not None},
        **paired_load_values(arguments),
    )


def run(settings: ShapesSettings, console: Console) -> Path:
    from loadtest.modes.shapes.runner import run_shapes

    return run_shapes(settings, console)
