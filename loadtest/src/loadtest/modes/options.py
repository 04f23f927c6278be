"""The options several modes share, each with its checks, so every mode spells and checks
them alike."""

import argparse
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from typing import Any

from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.lab.arms import ARM_NAMES, ARMS, DEFAULT_ARMS
from loadtest.lab.errors import LabError
from loadtest.lab.paths import DEFAULT_RESULTS_DIR
from loadtest.load.settings import PairedLoadSettings

PROGRAM = "./test.sh"


# --- Types: a bad value is a one-line error naming the option -------------------------------


def whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def positive_int(text: str) -> int:
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def enough_for_an_interval(what: str, note: str = "") -> Callable[[str], int]:
    """A count of pairs behind every ratio (rounds, or fresh processes paired by round): below
    MIN_PAIRS_FOR_CI no ratio has a 95% interval, and a run's verdict would still speak of its
    precision."""

    def parse(text: str) -> int:
        value = whole_number(text)
        if value < MIN_PAIRS_FOR_CI:
            raise argparse.ArgumentTypeError(
                f"{value} is below {MIN_PAIRS_FOR_CI}, the fewest {what} that give a ratio its "
                f"95% interval{note}"
            )
        return value

    return parse


def port_number(text: str) -> int:
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a TCP port (1-65535)")
    return value


def number_between(low: float, high: float, unit: str, what: str) -> Callable[[str], float]:
    """A number from `low` to `high`: `what` it is in the error for text ("a number of
    seconds"), and its `unit` after the bounds (" seconds")."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{value:g} must be between {low:g} and {high:g}{unit}"
            )
        return value

    return parse


def fraction_between(low: float, high: float) -> Callable[[str], float]:
    """A relative precision, written 0.05 for ±5%."""
    fraction = " (a fraction: 0.05 is ±5%)"
    return number_between(low, high, fraction, f"a number{fraction}")


def minutes_between(low: float, high: float) -> Callable[[str], float]:
    return number_between(low, high, " minutes", "a number of minutes")


def seconds_between(low: float, high: float) -> Callable[[str], float]:
    return number_between(low, high, " seconds", "a number of seconds")


def choice_list(allowed: tuple[str, ...]) -> Callable[[str], tuple[str, ...]]:
    """A comma-separated choice, in the canonical order of `allowed`."""

    def parse(text: str) -> tuple[str, ...]:
        parts = [part.strip() for part in text.split(",") if part.strip()]
        chosen = tuple(dict.fromkeys(parts))
        unknown = [part for part in chosen if part not in allowed]
        if not unknown and chosen and len(chosen) != len(parts):
            twice = sorted({part for part in parts if parts.count(part) > 1})
            raise argparse.ArgumentTypeError(f"{text!r}: {', '.join(twice)} named twice")
        if unknown or not chosen:
            raise argparse.ArgumentTypeError(
                f"{text!r}: choose from {', '.join(allowed)} (comma-separated)"
            )
        return tuple(name for name in allowed if name in chosen)

    return parse


# --- Options --------------------------------------------------------------------------------


def add_apps(parser: argparse.ArgumentParser, default: tuple[str, ...] = DEFAULT_ARMS) -> None:
    parser.add_argument(
        "--apps",
        type=choice_list(ARM_NAMES),
        default=default,
        help=f"arms to run, comma-separated, from {', '.join(ARM_NAMES)} "
        f"(default {','.join(default)})",
    )


def add_ports(parser: argparse.ArgumentParser) -> None:
    for arm in ARMS.values():
        parser.add_argument(
            f"--port-{arm.name}",
            type=port_number,
            default=arm.port,
            metavar="PORT",
            help=f"port of {arm.name} ({arm.environment}; default {arm.port})",
        )


def ports_from(arguments: argparse.Namespace, apps: tuple[str, ...]) -> dict[str, int]:
    """Every arm's port; two running arms on one port is a one-line error."""
    ports = {arm: getattr(arguments, f"port_{arm.replace('-', '_')}") for arm in ARMS}
    for arm, other in combinations(apps, 2):
        if ports[arm] == ports[other]:
            raise LabError(f"--port-{arm} and --port-{other} are both {ports[arm]}")
    return ports


def add_run_dirs(parser: argparse.ArgumentParser, help_text: str) -> None:
    """RUN_DIR...: the modes that read runs (report, losses)."""
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR", help=help_text)


def run_dirs_from(arguments: argparse.Namespace) -> tuple[Path, ...]:
    for run_dir in arguments.run_dirs:
        if not run_dir.is_dir():
            raise LabError(f"{run_dir} is not a directory")
    return tuple(arguments.run_dirs)


def add_results_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--results-dir",
        type=Path,
        default=DEFAULT_RESULTS_DIR,
        help="where runs are written (default results/)",
    )


def add_no_pin(
    parser: argparse.ArgumentParser,
    pinned: str = "the apps and the load generator (and PostgreSQL) to separate CPUs",
) -> None:
    """--no-pin; `pinned` says what the mode pins where (modes without a load generator pin
    other things)."""
    parser.add_argument("--no-pin", action="store_true", help=f"do not pin {pinned}")


def add_dataset_size(parser: argparse.ArgumentParser, minimum: int, default: int) -> None:
    def dataset_size(text: str) -> int:
        value = positive_int(text)
        if value < minimum:
            # READ asks for a full page of posts; fewer can never pass verification.
            raise argparse.ArgumentTypeError(f"{value} is below {minimum}, the READ page size")
        return value

    parser.add_argument(
        "--dataset-size",
        "--dataset",  # its first name, kept working
        dest="dataset_size",
        type=dataset_size,
        default=default,
        help=f"posts in the database (default {default:,})",
    )


def add_users(parser: argparse.ArgumentParser, default: int) -> None:
    """--users, None where not given (so a mode can tell a default from a value set by hand)."""
    parser.add_argument(
        "--users",
        type=positive_int,
        help=f"concurrent locust users (default {default})",
    )


def add_workers(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workers", type=positive_int, default=1, help="uvicorn workers per app (default 1)"
    )


def sample_count(text: str) -> int:
    """Fresh starts per arm: 0 (none) to 100."""
    value = whole_number(text)
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{value} must be between 0 and 100")
    return value


def add_no_calibration(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-calibration",
        action="store_true",
        help="skip measuring locust against a trivial endpoint",
    )


def add_window(parser: argparse.ArgumentParser, defaults: PairedLoadSettings) -> None:
    parser.add_argument(
        "--window",
        type=seconds_between(2 * defaults.settle_s, 600),
        help=f"seconds of one arm's window, {2 * defaults.settle_s:g}-600 (default "
        f"{defaults.window_s:g}; the first {defaults.settle_s:g}s of each are not counted)",
    )


def add_paired_load(
    parser: argparse.ArgumentParser,
    defaults: PairedLoadSettings,
    *,
    load_processes: bool = True,
    pinned: str = "the apps and the load generator (and PostgreSQL) to separate CPUs",
) -> None:
    """The options of a mode that loads the arms in paired windows (benchmark, ladder, sweep,
    shapes; the sweep and the shapes run one locust process: their users count themselves);
    `pinned` as add_no_pin takes it."""
    add_users(parser, defaults.users)
    add_window(parser, defaults)
    add_workers(parser)
    if load_processes:
        parser.add_argument(
            "--load-processes",
            type=positive_int,
            default=1,
            help="locust processes (a master and N workers when N > 1; default 1)",
        )
    add_no_pin(parser, pinned)
    add_no_calibration(parser)
    add_ports(parser)
    add_results_dir(parser)


def paired_load_values(arguments: argparse.Namespace) -> dict[str, Any]:
    """The PairedLoadSettings fields the options of add_paired_load (and --apps) set."""
    values: dict[str, Any] = {
        "apps": arguments.apps,
        "workers": arguments.workers,
        "load_processes": getattr(arguments, "load_processes", 1),
        "pin": not arguments.no_pin,
        "calibrate": not arguments.no_calibration,
        "ports": ports_from(arguments, arguments.apps),
        "results_dir": arguments.results_dir.resolve(),
    }
    if arguments.users is not None:
        values["users"] = arguments.users
    if arguments.window is not None:
        values["window_s"] = arguments.window
    return values


def size_list(text: str) -> tuple[int, ...]:
    sizes = []
    for part in text.split(","):
        try:
            size = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part!r} is not a whole number") from None
        if size < 1:
            raise argparse.ArgumentTypeError(f"{size} must be at least 1")
        sizes.append(size)
    if len(set(sizes)) != len(sizes):
        raise argparse.ArgumentTypeError(f"{text!r} names a size twice")
    return tuple(sorted(sizes))
