"""Cells in paired windows, as the sweep and the shapes mode time them: what the timetable and
the paired figures need of a cell (its name and size), its slot in the schedule, and an arm's
answer to it timed alone before the run."""

from dataclasses import dataclass
from typing import Any, Protocol

from loadtest.load.slots import Slot

TIMED_REQUESTS = 3  # sequential requests per arm and cell, after one untimed, to time a request


class NamedCell(Protocol):
    """What the timetable and the paired figures need of a cell (the sweep's, and the shapes
    mode's): its name, which names its slots."""

    @property
    def name(self) -> str: ...

    @property
    def size(self) -> int: ...


def cell_slot(cell: NamedCell, app: str) -> str:
    """The schedule slot of an app's cell: the app, the cell its variant ("v2/nested-1000")."""
    return Slot(app, cell.name).name


@dataclass(frozen=True)
class CellProbe:
    """One arm's answer to a cell, before timing: its size and how long it took alone."""

    request_bytes: int
    response_bytes: int
    seconds: float  # median of TIMED_REQUESTS sequential requests
    document: Any  # the parsed answer (reads), datetimes as instants
