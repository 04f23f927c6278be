"""The shapes mode's cells: what each sends, the cheap check of every answer under load, and
the answer every arm must give in full before anything is timed (the same JSON in every arm:
the union's members chosen alike)."""

import json
from dataclasses import dataclass
from typing import Any

import httpx

from loadtest.lab.errors import LabError
from loadtest.load.cells import CellProbe, timed_answer
from loadtest.load.plan import Request
from loadtest.modes.shapes.app import row, tree, tree_nodes, union_items
from loadtest.modes.shapes.settings import ShapesSettings

# How a cell's name reads: what it is, in a few words (the report's).
KINDS = {
    "union": "GET: a page of N members of a union of K (validated and serialised)",
    "union-tagged": "the same, the union discriminated by its members' tag",
    "union-validate": "POST: a page of N members validated, the count answered",
    "union-tagged-validate": "the same, discriminated",
    "tree": "GET: a self-referencing tree N levels deep, two children a node",
    "tree-validate": "POST: the same tree validated, its nodes counted",
    "parse_obj_as": "POST: N rows validated by parse_obj_as(List[Row], body) at every request",
    "adapter": "POST: the same rows by the reusable way (v2: a module-level TypeAdapter; v1: "
    "parse_obj_as, which caches its model)",
}


@dataclass(frozen=True)
class ShapeCell:
    kind: str  # a key of KINDS
    size: int  # members, levels or rows
    members: int = 0  # the union's, for the union kinds

    @property
    def name(self) -> str:
        union = f"{self.members}" if self.kind.startswith("union") else ""
        return f"{self.kind.replace('union', 'union' + union, 1)}-{self.size}"

    @property
    def is_read(self) -> bool:
        return self.kind in ("union", "union-tagged", "tree")

    @property
    def shape(self) -> str:
        """The cell without its size: its line in the report."""
        return self.name.rsplit("-", 1)[0]


def plan_cells(settings: ShapesSettings) -> list[ShapeCell]:
    """Reads, then bodies; then the trees and the rows (parse_obj_as beside its adapter)."""
    cells = []
    for members in settings.members:
        for kind in ("union", "union-tagged"):
            cells += [ShapeCell(kind, size, members) for size in settings.union_sizes]
    for members in settings.members:
        for kind in ("union-validate", "union-tagged-validate"):
            cells += [ShapeCell(kind, size, members) for size in settings.validate_sizes]
    for depth in settings.tree_depths:
        cells += [ShapeCell("tree", depth), ShapeCell("tree-validate", depth)]
    for rows in settings.row_sizes:
        cells += [ShapeCell("parse_obj_as", rows), ShapeCell("adapter", rows)]
    return cells


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def cell_request(cell: ShapeCell) -> Request:
    """What the cell sends, and the cheap check of every answer (under load too)."""
    flavour = "tagged" if "tagged" in cell.kind else "plain"
    if cell.kind in ("union", "union-tagged"):
        return Request(
            "GET",
            f"/union/{flavour}/{cell.members}?items={cell.size}",
            prefix='{"items":[',
            marker='"kind":',
            count=cell.size,
            item="member",
        )
    if cell.kind in ("union-validate", "union-tagged-validate"):
        body = compact({"items": union_items(cell.members, cell.size)})
        return Request(
            "POST",
            f"/union/{flavour}/{cell.members}/validate",
            body,
            exact=f'{{"count":{cell.size}}}',
        )
    if cell.kind == "tree":
        nodes = tree_nodes(cell.size)
        return Request(
            "GET",
            f"/tree?depth={cell.size}",
            prefix='{"id":0,',
            marker='"children":',
            count=nodes,
            item="node",
        )
    if cell.kind == "tree-validate":
        nodes = tree_nodes(cell.size)
        return Request(
            "POST", "/tree/validate", compact(tree(cell.size)), exact=f'{{"nodes":{nodes}}}'
        )
    body = compact([row(number) for number in range(cell.size)])
    return Request("POST", f"/rows/{cell.kind}", body, exact=f'{{"count":{cell.size}}}')


def expected_answer(cell: ShapeCell) -> Any:
    if cell.kind in ("union", "union-tagged"):
        return {"items": union_items(cell.members, cell.size)}
    if cell.kind == "tree":
        return tree(cell.size)
    return json.loads(cell_request(cell).exact or "null")


def probe_cell(client: httpx.Client, cell: ShapeCell, request: Request, slot: str) -> CellProbe:
    """Check one arm's answer in full (the same JSON the payload builders give) and time it
    alone; a LabError names the slot and what is wrong."""
    response, seconds = timed_answer(client, request)
    problem = request.problem(response.status_code, response.content)
    if problem is None and response.json() != expected_answer(cell):
        problem = "the answer differs from what the cell expects (another member chosen?)"
    if problem is not None:
        raise LabError(f"{slot}: {request.method} {request.path} failed verification: {problem}")
    return CellProbe(
        request_bytes=len(request.body.encode()) if request.body else 0,
        response_bytes=len(response.content),
        seconds=seconds,
        document=None,
    )
