"""Every mode of ./test.sh, declared once: the command line, results.json's kinds and `report`
read this table. A mode's code lives in its folder, modes/<name>/ (command.py; and, for a mode
that writes a run, results.py and report.py), imported only when it is used."""

import argparse
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, cast

from rich.console import Console


class ModeCommand(Protocol):
    """What cli.py needs of a mode: its `command.py`."""

    SUMMARY: str  # one line for ./test.sh --help, with how long it takes by default

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def settings_from(self, arguments: argparse.Namespace) -> Any: ...

    def run(self, settings: Any, console: Console) -> Path | None: ...


class ModeReport(Protocol):
    """What `report` and the end of every run need of a mode: its `report.py`."""

    def write_reports(self, run_dir: Path, results: dict[str, Any]) -> list[Path]: ...

    def print_report(self, results: dict[str, Any], console: Console) -> None: ...


@dataclass(frozen=True)
class Mode:
    name: str  # what ./test.sh takes, and its folder in modes/
    # results.json's `kind`, for a mode that writes a run (results/<UTC timestamp>[-kind]/).
    kind: str | None = None
    aliases: tuple[str, ...] = ()  # names it was known by, still taken
    # Whether ./test.sh takes the machine-wide run lock for it (scripts/one_run_at_a_time.sh,
    # whose LOCK_FREE_MODES says the same): a mode that starts servers, loads a database or
    # measures would corrupt, or be corrupted by, another run on the same CPUs.
    holds_the_machine: bool = True

    @property
    def command(self) -> ModeCommand:
        return cast(ModeCommand, self.module("command"))

    @property
    def report(self) -> ModeReport:
        return cast(ModeReport, self.module("report"))

    def module(self, name: str) -> ModuleType:
        return import_module(f"loadtest.modes.{self.name}.{name}")


# In the order --help lists them; a new mode is one more entry and one more folder.
MODES: dict[str, Mode] = {
    mode.name: mode
    for mode in (
        # `run` was the benchmark's name on the command line before it had one word everywhere.
        Mode("benchmark", kind="benchmark", aliases=("run",)),
        Mode("ladder", kind="ladder"),
        Mode("micro", kind="micro"),
        Mode("profile", kind="profile"),
        Mode("scale", kind="scale"),
        Mode("sweep", kind="sweep"),
        Mode("shapes", kind="shapes"),
        Mode("workers", kind="workers"),
        Mode("latency", kind="latency"),
        Mode("compare", kind="compare"),
        Mode("versions", kind="versions"),
        Mode("report", holds_the_machine=False),  # reads results.json: starts nothing
        Mode("losses", holds_the_machine=False),  # reads results.json too
        Mode("up"),
        Mode("dataset"),
        Mode("clean"),  # stops what a killed run left: holds the lock, so no run is alive
    )
}
DEFAULT_MODE = "benchmark"
KINDS = tuple(mode.kind for mode in MODES.values() if mode.kind is not None)


def mode_named(name: str) -> Mode | None:
    """The mode a command line names, by its name or an old one."""
    return next((mode for mode in MODES.values() if name in (mode.name, *mode.aliases)), None)


def mode_of_kind(kind: str) -> Mode | None:
    return next((mode for mode in MODES.values() if mode.kind == kind), None)
