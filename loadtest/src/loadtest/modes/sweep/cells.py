"""The sweep's cells, (shape, size): the request each sends (with the cheap check every answer
gets under load), and the full check every arm passes before anything is timed (probe_cell)."""

import json
from dataclasses import dataclass
from typing import Any

import httpx

from commons.payloads import MAX_BULK_POSTS, as_instants, bulk_post
from loadtest.lab.errors import LabError
from loadtest.load.cells import CellProbe, timed_answer
from loadtest.load.plan import Request
from loadtest.load.scenarios import post_list
from loadtest.modes.sweep.settings import READ_SHAPES, READ_SIZES, WRITE_SIZES, SweepSettings


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


def cell_request(cell: Cell, comments: int) -> Request:
    """What the cell sends, and the cheap check of every answer (under load too)."""
    if cell.shape == "flat":
        return post_list(f"/payloads/flat?items={cell.size}", cell.size)
    if cell.shape == "nested":
        return post_list(f"/payloads/nested?items={cell.size}&comments={comments}", cell.size)
    body = json.dumps(
        {"posts": [bulk_post(number) for number in range(1, cell.size + 1)]},
        separators=(",", ":"),
    )
    if cell.shape == "bulk":
        return Request("POST", "/posts_bulk", body, status=201, prefix='{"ids":[')
    return Request(
        "POST", "/payloads/validate", body, prefix='{"count":', exact=f'{{"count":{cell.size}}}'
    )


def probe_cell(client: httpx.Client, cell: Cell, request: Request, slot: str) -> CellProbe:
    """Check one arm's answer in full and time it alone; a LabError names what is wrong (and
    the slot: the arm and the cell)."""
    response, seconds = timed_answer(client, request)
    problem = request.problem(response.status_code, response.content)
    document = None
    if problem is None:
        document = as_instants(response.json())
        problem = full_problem(cell, document)
    if problem is not None:
        raise LabError(f"{slot}: {request.method} {request.path} failed verification: {problem}")
    return CellProbe(
        request_bytes=len(request.body.encode()) if request.body else 0,
        response_bytes=len(response.content),
        seconds=seconds,
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
    return None  # validate: the cheap check compared the whole answer


def compare_reads(cell: Cell, probes: dict[str, CellProbe]) -> None:
    """Every arm answers the same posts (instants compared, key order free)."""
    reference_app, reference = next(iter(probes.items()))
    for app, probe in probes.items():
        if probe.document != reference.document:
            raise LabError(
                f"{cell.name}: {app}'s answer differs from {reference_app}'s (same request, "
                "other posts or fields)"
            )
