"""`./test.sh latency`: the latency mode's options, settings and entry point."""

import argparse
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.lab.errors import LabError
from loadtest.load.open_loop.arrivals import PROCESSES
from loadtest.modes.latency.httperf import HTTPERF_ELSEWHERE, HTTPERF_SCENARIO
from loadtest.modes.latency.mixed import BESIDE_RPS, LARGE_PER_PAGE, LATENCY_SCENARIO_NAMES
from loadtest.modes.latency.settings import (
    LATENCY_APPS,
    QUICK_ROUNDS,
    QUICK_WINDOW_S,
    LatencySettings,
)
from loadtest.modes.options import (
    add_apps,
    add_no_pin,
    add_ports,
    add_results_dir,
    choice_list,
    enough_for_an_interval,
    ports_from,
    positive_int,
    seconds_between,
)

SUMMARY = (
    "latency at steady traffic: requests sent open-loop at fixed rates (25, 50, 75 and 90% of "
    "v1's capacity, then past it), p50/p90/p99 counted from each request's due time, each "
    "arm's knee (~8 min; --quick ~3 min)"
)


def number_list(what: str, low: float, high: float) -> Callable[[str], tuple[float, ...]]:
    def parse(text: str) -> tuple[float, ...]:
        numbers = []
        for part in text.split(","):
            try:
                number = float(part)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{part!r} is not a number") from None
            if not low < number <= high:
                raise argparse.ArgumentTypeError(
                    f"{number:g}: {what} must be above {low:g} and at most {high:,g}"
                )
            numbers.append(number)
        if len(set(numbers)) != len(numbers):
            raise argparse.ArgumentTypeError(f"{text!r} names a value twice")
        return tuple(sorted(numbers))

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = LatencySettings()
    parser.description = (
        "Offer each arm the same requests at the same due times (an open loop: a request goes "
        "out at its time whether or not earlier ones were answered) at fixed rates, and count "
        "each request's latency from its due time, so a stall is charged to every request that "
        "should have gone out during it. The rates are fractions of the baseline arm's "
        "capacity, measured first; at each, rounds of one window per arm alternate which arm "
        "goes first, and each arm's windows are pooled into one histogram. Then, last, one rate "
        "between the arms' capacities (where the fastest arm's is at least 1.2 times the "
        "baseline's) and one past them all. The load generator's own "
        "limit on a near-free endpoint is measured before anything else, and a rate past it "
        f"is refused. About 8 minutes with the defaults ({defaults.pairs} rounds of "
        f"{defaults.window_s:g} s windows per rate), 3 with --quick. Results go to "
        "results/<UTC timestamp>-latency/."
    )
    add_what_to_load(parser, defaults)
    add_how_to_load(parser, defaults)
    add_ports(parser)
    add_results_dir(parser)
    add_no_pin(parser, "the apps, and the generator with PostgreSQL, to separate CPUs")


def add_what_to_load(parser: argparse.ArgumentParser, defaults: LatencySettings) -> None:
    """What is loaded: the scenarios, the arms and the rates."""
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a first look in about 3 minutes: {QUICK_ROUNDS} rounds of {QUICK_WINDOW_S:g} s "
        "windows per rate",
    )
    parser.add_argument(
        "--scenarios",
        type=choice_list(LATENCY_SCENARIO_NAMES),
        default=defaults.scenarios,
        help=f"comma-separated, from {', '.join(LATENCY_SCENARIO_NAMES)} (default "
        f"{','.join(defaults.scenarios)}; each one adds about as long again). mixed and "
        f"async-mixed: one post by id, while pages of {LARGE_PER_PAGE:,} posts are asked beside "
        f"it at {BESIDE_RPS:g} r/s, on def and on async def routes",
    )
    add_apps(parser, LATENCY_APPS)
    rates = parser.add_mutually_exclusive_group()
    rates.add_argument(
        "--fractions",
        type=number_list("a fraction of the capacity", 0, 1),
        default=defaults.fractions,
        help="the paired rates as fractions of the baseline arm's measured capacity, "
        f"comma-separated (default {','.join(f'{f:g}' for f in defaults.fractions)})",
    )
    rates.add_argument(
        "--rates",
        type=number_list("a rate", 0, 1_000_000),
        default=(),
        metavar="R/S,...",
        help="absolute rates (requests per second) in place of --fractions: those below the "
        "baseline's capacity are paired, those at or past it run last with the overload rates "
        "(which still run); a rate the load generator cannot hold on this machine is refused "
        "before any arm starts",
    )


def add_how_to_load(parser: argparse.ArgumentParser, defaults: LatencySettings) -> None:
    """How it is loaded: rounds, windows, arrivals, connections, and the extra rates and checks."""
    parser.add_argument(
        "--rounds",
        type=enough_for_an_interval("rounds"),
        help=f"rounds per paired rate, one window per arm each (default {defaults.pairs}, "
        f"--quick {QUICK_ROUNDS}; at least {MIN_PAIRS_FOR_CI}, the fewest with a 95%% interval)",
    )
    parser.add_argument(
        "--window",
        type=seconds_between(1, 60),
        help=f"seconds per window (default {defaults.window_s:g}, --quick {QUICK_WINDOW_S:g}); "
        f"the first {defaults.settle_s:g} s of each are not counted",
    )
    parser.add_argument(
        "--arrivals",
        choices=PROCESSES,
        default=defaults.process,
        help="poisson: independent random gaps, as from many clients (default); constant: "
        "evenly spaced, as wrk2 sends",
    )
    parser.add_argument(
        "--connections",
        type=positive_int,
        default=defaults.connections,
        help="the cap on requests in flight per arm; a request due while all are busy waits, "
        f"its latency still counted from its due time (default {defaults.connections})",
    )
    parser.add_argument(
        "--no-overload",
        action="store_true",
        help="skip the overload rates (between the capacities and past them; the knee then "
        "lies past the highest paired rate unless one of those passes it)",
    )
    parser.add_argument(
        "--httperf",
        action="store_true",
        help="an independent check on READ synthetic (add it to --scenarios): at the paired "
        "rate nearest 50%% of the baseline's capacity, httperf (Debian's package, installed if "
        "missing) and the lab's generator, each with a connection per request, p50/p99 side "
        "by side",
    )


def settings_from(arguments: argparse.Namespace) -> LatencySettings:
    defaults = LatencySettings()
    if arguments.httperf and HTTPERF_SCENARIO not in arguments.scenarios:
        raise LabError(
            f"--httperf: {HTTPERF_ELSEWHERE}; add it: --scenarios "
            f"{','.join((*arguments.scenarios, HTTPERF_SCENARIO))}"
        )
    rounds = arguments.rounds or (QUICK_ROUNDS if arguments.quick else defaults.pairs)
    window_s = arguments.window or (QUICK_WINDOW_S if arguments.quick else defaults.window_s)
    return replace(
        defaults,
        apps=arguments.apps,
        scenarios=arguments.scenarios,
        fractions=arguments.fractions,
        rates=arguments.rates,
        pairs=rounds,
        window_s=window_s,
        process=arguments.arrivals,
        connections=arguments.connections,
        overload=not arguments.no_overload,
        httperf=arguments.httperf,
        pin=not arguments.no_pin,
        ports=ports_from(arguments, arguments.apps),
        results_dir=arguments.results_dir,
    )


def run(settings: LatencySettings, console: Console) -> Path:
    from loadtest.modes.latency.runner import run_latency

    return run_latency(settings, console)
