"""The sweep's cells, (shape, size): the request each sends, how a locust user checks its answer
cheaply, and the full check every arm passes before anything is timed (verify_cell)."""

import json
import statistics
import time
from dataclasses import dataclass
from typing import Any

import httpx

from commons.payloads import MAX_BULK_POSTS, as_instants, bulk_post
from loadtest.lab.errors import LabError
from loadtest.modes.sweep.settings import READ_SHAPES, READ_SIZES, WRITE_SIZES, SweepSettings

CELL_SEPARATOR = "@"  # an arm of the sweep is "<cell>@<app>", e.g. "nested-1000@v2"
TIMED_REQUESTS = 3  # sequential requests per arm and cell, after one untimed, to time a request


@dataclass(frozen=True)
class Cell:
    shape: str
    size: int  # posts answered (reads) or sent (writes)

    @property
    def name(self) -> str:
        return f"{self.shape}-{self.size}"

    @property
    def is_read(self) -> bool:
        return self.shape in READ_SHAPES


def sweep_arm(cell: Cell, app: str) -> str:
    return f"{cell.name}{CELL_SEPARATOR}{app}"


def split_arm(arm: str) -> tuple[str, str]:
    cell, _, app = arm.rpartition(CELL_SEPARATOR)
    return cell, app


def plan_cells(settings: SweepSettings) -> list[Cell]:
    """Every (shape, size) the settings ask for, reads first, smallest first; a one-line error
    when a shape is left with no size."""
    cells = []
    for shape in settings.shapes:
        sizes: tuple[int, ...] = READ_SIZES if shape in READ_SHAPES else WRITE_SIZES
        if settings.sizes is not None:
            bound = max(READ_SIZES) if shape in READ_SHAPES else MAX_BULK_POSTS
            sizes = tuple(size for size in settings.sizes if size <= bound)
            if not sizes:
                raise LabError(
                    f"--sizes {','.join(map(str, settings.sizes))} leaves {shape} nothing: it "
                    f"takes at most {bound:,} posts"
                )
        cells += [Cell(shape, size) for size in sizes]
    return cells


@dataclass(frozen=True)
class CellRequest:
    """What a cell sends, and what its answer must look like (checked by every locust user on
    every answer, cheaply: status, prefix, count)."""

    method: str
    path: str
    body: str | None
    status: int
    prefix: str
    marker: str | None = None  # must occur `size` times (one per post)
    exact: str | None = None  # the whole answer

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "body": self.body,
            "status": self.status,
            "prefix": self.prefix,
            "marker": self.marker,
            "exact": self.exact,
        }


def cell_request(cell: Cell, comments: int) -> CellRequest:
    if cell.shape == "flat":
        return CellRequest(
            "GET", f"/payloads/flat?items={cell.size}", None, 200, '{"posts":[', '"is_published":'
        )
    if cell.shape == "nested":
        return CellRequest(
            "GET",
            f"/payloads/nested?items={cell.size}&comments={comments}",
            None,
            200,
            '{"posts":[',
            '"is_published":',
        )
    body = json.dumps(
        {"posts": [bulk_post(number) for number in range(1, cell.size + 1)]},
        separators=(",", ":"),
    )
    if cell.shape == "bulk":
        return CellRequest("POST", "/posts_bulk", body, 201, '{"ids":[')
    return CellRequest(
        "POST", "/payloads/validate", body, 200, '{"count":', exact=f'{{"count":{cell.size}}}'
    )


def quick_problem(request: CellRequest, size: int, status: int, content: bytes) -> str | None:
    """What is wrong with an answer, by the cheap checks of every timed request; None if
    nothing. The same function runs in the locust users (sweep_users.py)."""
    if status != request.status:
        return f"status {status}"
    if not content.startswith(request.prefix.encode()):
        return "not the expected answer"
    if request.marker is not None and content.count(request.marker.encode()) != size:
        return f"expected {size} posts"
    if request.exact is not None and content != request.exact.encode():
        return f"expected {request.exact}"
    return None


@dataclass(frozen=True)
class CellProbe:
    """One arm's answer to a cell, before timing: its size and how long it took alone."""

    request_bytes: int
    response_bytes: int
    seconds: float  # median of TIMED_REQUESTS sequential requests
    document: Any  # the parsed answer (reads), datetimes as instants


def send(client: httpx.Client, request: CellRequest) -> httpx.Response:
    return client.request(
        request.method,
        request.path,
        content=request.body,
        headers={"content-type": "application/json"} if request.body else None,
    )


def probe_cell(client: httpx.Client, cell: Cell, request: CellRequest, arm: str) -> CellProbe:
    """Check one arm's answer in full and time it alone; a LabError names what is wrong."""
    timings = []
    response = send(client, request)
    for _ in range(TIMED_REQUESTS):
        started = time.perf_counter()
        response = send(client, request)
        timings.append(time.perf_counter() - started)
    problem = quick_problem(request, cell.size, response.status_code, response.content)
    document = None
    if problem is None:
        document = as_instants(response.json())
        problem = full_problem(cell, document)
    if problem is not None:
        raise LabError(f"{arm}: {request.method} {request.path} failed verification: {problem}")
    return CellProbe(
        request_bytes=len(request.body.encode()) if request.body else 0,
        response_bytes=len(response.content),
        seconds=statistics.median(timings),
        document=document if cell.is_read else None,
    )


def full_problem(cell: Cell, document: Any) -> str | None:
    if cell.is_read:
        posts = document.get("posts") if isinstance(document, dict) else None
        if not isinstance(posts, list) or len(posts) != cell.size:
            return f'expected {{"posts": [...]}} with {cell.size} posts'
        if [post.get("id") for post in posts] != list(range(1, cell.size + 1)):
            return "posts are not 1 to N in order"
        return None
    if cell.shape == "bulk":
        ids = document.get("ids") if isinstance(document, dict) else None
        if not isinstance(ids, list) or len(set(ids)) != cell.size:
            return f"expected {cell.size} distinct ids"
        return None
    return None  # validate: quick_problem compared the whole answer


def compare_reads(cell: Cell, probes: dict[str, CellProbe]) -> None:
    """Every arm answers the same posts (instants compared, key order free)."""
    reference_app, reference = next(iter(probes.items()))
    for app, probe in probes.items():
        if probe.document != reference.document:
            raise LabError(
                f"{cell.name}: {app}'s answer differs from {reference_app}'s (same request, "
                "other posts or fields)"
            )
