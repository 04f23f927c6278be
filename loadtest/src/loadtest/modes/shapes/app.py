"""The app the shapes mode loads, generated in each arm's schema idiom (v1: pydantic.v1, as
app_v1 spells it; v2: Pydantic 2's own), so the lab's served apps stay as they are:

- unions of K members (each with a distinct required `Literal` tag, `kind`), plain and
  discriminated by that tag: GET answers a page of N members (validated by its response_model
  and serialised), POST validates a page of N and answers the count;
- a self-referencing tree: GET answers a tree D levels deep (two children a node), POST
  validates one and answers the node count;
- rows validated by `parse_obj_as(List[Row], body)` on every request (in Pydantic 2 the
  deprecated function, which builds a TypeAdapter at every call), and by the idiom's reusable
  way: a module-level `TypeAdapter(List[Row])` in v2, `parse_obj_as` again in v1 (which caches
  the model it builds).
"""

from pathlib import Path
from typing import Any

from loadtest.generated.shapes.base import CORE_VERSION_SOURCE

PACKAGE = "shape_app"
MODULE = f"{PACKAGE}.main:app"
MEMBERS = (2, 5, 20)  # the union sizes the app serves
MAX_ITEMS = 5000
MAX_DEPTH = 12
TREE_FANOUT = 2


def tag(index: int) -> str:
    return f"v{index:02d}"


def member(index: int) -> dict[str, Any]:
    """Union member `index` as the app answers it (every field, defaults included)."""
    return {
        "kind": tag(index),
        "id": index,
        "name": f"member {index}",
        f"weight_{index:02d}": 1.5,
        "note": None,
    }


def union_items(members: int, items: int) -> list[dict[str, Any]]:
    """A page's items: the members in turn."""
    return [member(number % members) | {"id": number} for number in range(items)]


def tree(depth: int, number: int = 0) -> dict[str, Any]:
    """A tree `depth` levels deep, TREE_FANOUT children a node."""
    children = (
        [tree(depth - 1, number * TREE_FANOUT + child + 1) for child in range(TREE_FANOUT)]
        if depth > 1
        else []
    )
    return {"id": number, "name": f"node {number}", "value": number, "children": children}


def tree_nodes(depth: int) -> int:
    return sum(TREE_FANOUT**level for level in range(depth))


def row(number: int) -> dict[str, Any]:
    return {"id": number, "name": f"row {number}", "score": 42.5, "tags": ["alpha", "beta"]}


def models_module(idiom: str) -> str:
    v1 = idiom == "v1"
    pydantic = (
        "from pydantic.v1 import BaseModel, Field, parse_obj_as"
        if v1
        else "from pydantic import BaseModel, Field, TypeAdapter"
    )
    lines = [
        f'"""The shapes mode\'s models, {idiom} idiom."""',
        "",
        "from typing import Annotated, Any, List, Literal, Optional, Union",
        "",
        pydantic,
    ]
    lines += union_lines() + tree_and_row_lines(v1) + rows_function_lines(v1)
    return "\n".join(lines) + "\n"


def union_lines() -> list[str]:
    """The variants, and for each union size a plain and a tagged union with a page of each."""
    lines: list[str] = []
    for index in range(max(MEMBERS)):
        lines += [
            "",
            "",
            f"class Variant{index:02d}(BaseModel):",
            f'    kind: Literal["{tag(index)}"]',
            "    id: int",
            "    name: str = Field(min_length=1, max_length=80)",
            f"    weight_{index:02d}: float = 0.0",
            "    note: Optional[str] = None",
        ]
    for size in MEMBERS:
        union = f"Union[{', '.join(f'Variant{index:02d}' for index in range(size))}]"
        lines += [
            "",
            "",
            f"Plain{size} = {union}",
            f'Tagged{size} = Annotated[{union}, Field(discriminator="kind")]',
            "",
            "",
            f"class PlainPage{size}(BaseModel):",
            f"    items: List[Plain{size}]",
            "",
            "",
            f"class TaggedPage{size}(BaseModel):",
            f"    items: List[Tagged{size}]",
        ]
    return lines


def tree_and_row_lines(v1: bool) -> list[str]:
    return [
        "",
        "",
        "class Tree(BaseModel):",
        "    id: int",
        "    name: str = Field(min_length=1, max_length=80)",
        "    value: int = 0",
        '    children: List["Tree"] = Field(default_factory=list)',
        "",
        "",
        "Tree.update_forward_refs()" if v1 else "Tree.model_rebuild()",
        "",
        "",
        "class Row(BaseModel):",
        "    id: int",
        "    name: str = Field(min_length=1, max_length=80)",
        "    score: float = Field(ge=0, le=100)",
        "    tags: List[str] = Field(default_factory=list)",
    ]


def rows_function_lines(v1: bool) -> list[str]:
    """The rows validated on every request with a fresh parse, and with the reusable way."""
    lines = [
        "",
        "",
        "def rows_every_time(body: Any) -> List[Row]:",
        '    """parse_obj_as on every request."""',
    ]
    if v1:
        return lines + [
            "    return parse_obj_as(List[Row], body)",
            "",
            "",
            "def rows_reused(body: Any) -> List[Row]:",
            '    """Pydantic 1.10 caches the model parse_obj_as builds: the same call is its',
            '    reusable way."""',
            "    return parse_obj_as(List[Row], body)",
        ]
    return lines + [
        "    # Deprecated since Pydantic 2.0, kept by the migrations that did not move: it",
        "    # builds a TypeAdapter at every call.",
        "    from pydantic.deprecated.tools import parse_obj_as",
        "",
        "    return parse_obj_as(List[Row], body)",
        "",
        "",
        "ROWS = TypeAdapter(List[Row])",
        "",
        "",
        "def rows_reused(body: Any) -> List[Row]:",
        '    """A module-level TypeAdapter, built once."""',
        "    return ROWS.validate_python(body)",
    ]


def main_module(idiom: str) -> str:
    lines = [
        f'"""The shapes mode\'s app, {idiom} idiom."""',
        "",
        "import warnings",
        "from typing import Any, Dict",
        "",
        "import fastapi",
        "import pydantic",
        "from fastapi import Body, FastAPI, Query",
        "",
        f"from {PACKAGE} import models",
        f"from {PACKAGE}.data import ITEMS, TREES",
        "",
        CORE_VERSION_SOURCE,
        "# The deliberate parse_obj_as route warns at every call; its warning is not the measure.",
        'warnings.filterwarnings("ignore", message=".*parse_obj_as.*")',
        "",
        f'app = FastAPI(title="The shapes mode\'s app, {idiom} idiom")',
        f"ITEMS_QUERY = Query(ge=1, le={MAX_ITEMS})",
    ]
    lines += union_route_lines() + other_route_lines()
    return "\n".join(lines) + "\n"


def union_route_lines() -> list[str]:
    """For every union size, plain and tagged: a page read, and a page validated."""
    lines: list[str] = []
    for size in MEMBERS:
        for kind in ("plain", "tagged"):
            page = f"models.{kind.title()}Page{size}"
            lines += [
                "",
                "",
                f'@app.get("/union/{kind}/{size}", response_model={page})',
                f"def read_{kind}_{size}(items: int = ITEMS_QUERY) -> Dict[str, Any]:",
                f'    return {{"items": ITEMS[{size}][:items]}}',
                "",
                "",
                f'@app.post("/union/{kind}/{size}/validate")',
                f"def validate_{kind}_{size}(page: {page}) -> Dict[str, int]:",
                '    return {"count": len(page.items)}',
            ]
    return lines


def other_route_lines() -> list[str]:
    """The tree read and validated, rows parsed two ways, and /health with the versions."""
    return [
        "",
        "",
        '@app.get("/tree", response_model=models.Tree)',
        f"def read_tree(depth: int = Query(ge=1, le={MAX_DEPTH})) -> Dict[str, Any]:",
        "    return TREES[depth]",
        "",
        "",
        "def count_nodes(node: models.Tree) -> int:",
        "    return 1 + sum(count_nodes(child) for child in node.children)",
        "",
        "",
        '@app.post("/tree/validate")',
        "def validate_tree(tree: models.Tree) -> Dict[str, int]:",
        '    return {"nodes": count_nodes(tree)}',
        "",
        "",
        '@app.post("/rows/parse_obj_as")',
        "def rows_parse_obj_as(body: Any = Body(...)) -> Dict[str, int]:",
        '    return {"count": len(models.rows_every_time(body))}',
        "",
        "",
        '@app.post("/rows/adapter")',
        "def rows_adapter(body: Any = Body(...)) -> Dict[str, int]:",
        '    return {"count": len(models.rows_reused(body))}',
        "",
        "",
        '@app.get("/health")',
        "def health() -> dict:",
        "    return {",
        '        "status": "ok",',
        '        "versions": {',
        '            "pydantic": pydantic.VERSION,',
        '            "pydantic_core": PYDANTIC_CORE,',
        '            "fastapi": fastapi.__version__,',
        "        },",
        "    }",
    ]


def data_module() -> str:
    return (
        '"""What the GET routes answer, built once at start-up."""\n\n'
        f"from {PACKAGE}.payloads import tree, union_items\n\n"
        f"ITEMS = {{members: union_items(members, {MAX_ITEMS}) for members in {MEMBERS!r}}}\n"
        f"TREES = {{depth: tree(depth) for depth in range(1, {MAX_DEPTH} + 1)}}\n"
    )


def generate(idiom: str, folder: Path) -> Path:
    """Write the app's package under `folder` (which goes on PYTHONPATH); returns `folder`."""
    package = folder / PACKAGE
    package.mkdir(parents=True, exist_ok=False)
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(models_module(idiom))
    (package / "main.py").write_text(main_module(idiom))
    (package / "data.py").write_text(data_module())
    # The payload builders themselves, so the app answers what the harness expects.
    (package / "payloads.py").write_text(payloads_source())
    return folder


def payloads_source() -> str:
    import inspect

    functions = (tag, member, union_items, tree)
    constants = f"TREE_FANOUT = {TREE_FANOUT}\n"
    body = "\n\n".join(inspect.getsource(function) for function in functions)
    return (
        '"""The payloads the GET routes answer (the same code the harness expects them by)."""\n\n'
        f"from typing import Any\n\n{constants}\n\n{body}"
    )
