"""Command line of ./test.sh: pick the mode, parse its options, run it, fail in one line."""

import argparse
import signal
import sys
import textwrap
from typing import NoReturn

from rich.console import Console

from loadtest.lab.errors import LabError, raised_elsewhere
from loadtest.lab.leftovers import find_leftovers
from loadtest.modes.options import PROGRAM
from loadtest.modes.registry import DEFAULT_MODE, MODES, ModeCommand, mode_named


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad option is one line (not usage + error) and exit 2; an option of
    another mode says so."""

    mode = DEFAULT_MODE
    options_elsewhere: dict[str, list[str]] = {}  # option -> the other modes that take it

    def error(self, message: str) -> NoReturn:
        see = f"(see {PROGRAM} {self.mode} --help)"
        if message.startswith("unrecognized arguments: "):
            given = message.removeprefix("unrecognized arguments: ").split()
            foreign = [word.split("=")[0] for word in given]
            foreign = [option for option in foreign if option in self.options_elsewhere]
            if foreign:
                verb = "does" if len(foreign) == 1 else "do"
                message = f"{', '.join(foreign)} {verb} not apply to the {self.mode} mode"
        self.exit(2, f"{PROGRAM}: error: {message} {see}\n")


def build_parser(mode: str) -> OneLineParser:
    parser = OneLineParser(prog=f"{PROGRAM} {mode}", allow_abbrev=False)
    parser.mode = mode
    MODES[mode].command.add_arguments(parser)
    parser.options_elsewhere = {
        option: [other for other in MODES if other != mode]
        for option in all_options()
        if option not in options_of(parser)
    }
    return parser


def options_of(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def all_options() -> set[str]:
    found: set[str] = set()
    for name, mode in MODES.items():
        parser = argparse.ArgumentParser(prog=name, add_help=False)
        mode.command.add_arguments(parser)
        found |= options_of(parser)
    return found


def top_help() -> str:
    modes = "\n".join(
        textwrap.fill(
            mode.command.SUMMARY + (f" (also: {', '.join(mode.aliases)})" if mode.aliases else ""),
            width=100,
            initial_indent=f"  {name:<9} ",
            subsequent_indent=" " * 12,
        )
        for name, mode in MODES.items()
    )
    lock_free = [name for name, mode in MODES.items() if not mode.holds_the_machine]
    one_at_a_time = textwrap.fill(
        f"One run at a time: two runs on the same CPUs corrupt each other's figures, so every "
        f"mode but {' and '.join(lock_free)} (and --help) holds a machine-wide lock while it runs, "
        f"and a second run is refused at once, in one line naming the first "
        f"(docs/operations.md).",
        width=100,
    )
    return (
        f"usage: {PROGRAM} [MODE] [OPTIONS]\n\n"
        "The Pydantic v1 vs v2 lab. Modes (`{0} MODE --help` lists a mode's own options):\n"
        f"{modes}\n\n{one_at_a_time}\n\n"
        f"Without a mode, {PROGRAM} runs the benchmark. Its options:\n\n".format(PROGRAM)
        + build_parser(DEFAULT_MODE).format_help()
    )


def start_teardown(*_: object) -> NoReturn:
    """First Ctrl-C, SIGTERM or SIGHUP: tear down. Further ones are ignored so teardown can
    finish."""
    for signal_number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signal_number, signal.SIG_IGN)
    raise KeyboardInterrupt


def split_mode(argv: list[str]) -> tuple[str, list[str]]:
    if argv and (mode := mode_named(argv[0])) is not None:
        return mode.name, argv[1:]
    if argv and not argv[0].startswith("-"):
        raise LabError(
            f"unknown mode {argv[0]!r}: choose from {', '.join(MODES)} (see {PROGRAM} --help)"
        )
    return DEFAULT_MODE, argv


def parse(argv: list[str]) -> tuple[ModeCommand, argparse.Namespace]:
    """The mode's command and its parsed options; a bad one exits 2 with one line."""
    try:
        mode, arguments_given = split_mode(argv)
    except LabError as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    # Intermixed: `report --results-dir D RUN_A RUN_B` puts options among the run directories.
    return MODES[mode].command, build_parser(mode).parse_intermixed_args(arguments_given)


def note_leftovers(mode: str) -> None:
    """Before a mode that needs the machine: one line on what an earlier run killed outright
    left (its ports may be the ones this run needs), and how to clean it up."""
    if not MODES[mode].holds_the_machine or mode == "clean":
        return
    leftovers = find_leftovers()
    if leftovers:
        print(
            f"{PROGRAM}: note: an earlier run killed outright left {leftovers.summary()}; "
            f"{PROGRAM} clean stops them and removes its data folders",
            file=sys.stderr,
        )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(top_help(), end="")
        return 0
    command, arguments = parse(argv)
    note_leftovers(split_mode(argv)[0])
    # No console markup: what is printed includes labels, commands and paths from files the lab
    # reads, and "[/oops]" in one must print as it is (issue 53); styles go as rich Text.
    console = Console(markup=False)
    if not console.is_terminal:
        # Logs and CI: wide enough that three arms never wrap.
        console = Console(width=132, markup=False)
    # SIGTERM tears down like Ctrl-C does: every `with`/`finally` below runs. SIGINT is set
    # explicitly too: a shell starts background jobs with it ignored, and Ctrl-C must still work.
    for signal_number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # HUP: terminal closed
        signal.signal(signal_number, start_teardown)
    try:
        command.run(command.settings_from(arguments), console)
    except LabError as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if raised_elsewhere:  # a watcher thread stopped the run
            print(
                f"{PROGRAM}: error: {raised_elsewhere[0]}; everything it started was stopped",
                file=sys.stderr,
            )
            return 1
        print(f"{PROGRAM}: interrupted; everything it started was stopped", file=sys.stderr)
        return 130
    return 0
