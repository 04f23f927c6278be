"""Cells in paired windows, as the sweep and the shapes mode time them: what the timetable and
the paired figures need of a cell (its name and size), its slot in the schedule, and an arm's
answer to it timed alone before the run."""

import statistics
import time
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from loadtest.load.plan import JSON_HEADERS, Request
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


def send(client: httpx.Client, request: Request) -> httpx.Response:
    return client.request(
        request.method,
        request.path,
        content=request.body,
        headers=JSON_HEADERS if request.body else None,
    )


def timed_answer(client: httpx.Client, request: Request) -> tuple[httpx.Response, float]:
    """An arm's answer to a cell's request, and how long the request takes alone: one untimed,
    then the median of TIMED_REQUESTS sequential ones (the last answer is returned)."""
    send(client, request)
    timings = []
    for _ in range(TIMED_REQUESTS):
        started = time.perf_counter()
        response = send(client, request)
        timings.append(time.perf_counter() - started)
    return response, statistics.median(timings)
