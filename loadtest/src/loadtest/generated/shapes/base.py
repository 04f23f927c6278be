"""What every shape gives the generator: an app's models as source, its examples as JSON and
its endpoints, each with the request that exercises it and the answer it must give."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Every model has these; the examples fill them alike in both majors.
EXAMPLE_TIME = "2024-05-01T08:00:00+00:00"
MODELS_PER_ROUTER = 10  # a router (and a module of routes) per ten models


@dataclass(frozen=True)
class AppSpec:
    """What a shape is asked for (a subset of the generator's ScaleApp, so shapes need not
    import it)."""

    idiom: str  # "v1" (app_v1's: pydantic.v1, @validator, orm_mode) or "v2"
    size: int  # models, union members or routes per model: the shape's axis
    seed: int
    defer_build: bool
    variant: str | None  # one of the shape's variants (union: "tagged"), or None


@dataclass(frozen=True)
class Endpoint:
    """One route: its declaration in the generated router, and one call that exercises it."""

    group: int  # the router (module) it is declared in
    method: str  # "get" or "post", as FastAPI's decorator is named
    path: str  # below its group's prefix, e.g. "/m12/{item_id}"
    response_model: str  # a type expression of the models module
    function: str
    parameters: str  # the function's parameters, as source
    returns: str  # its return annotation
    body: str  # its one statement
    uses: tuple[str, ...]  # names it imports from the models module
    call_path: str  # the path called, below the group's prefix
    request: Any  # JSON sent (POST), or None
    expected: Any  # the JSON the answer must be


@dataclass(frozen=True)
class AppSource:
    models_module: str
    examples: dict[str, Any]  # name -> JSON, what the GET routes answer (EXAMPLES[name])
    endpoints: list[Endpoint]
    models: int  # model classes in models_module


@dataclass(frozen=True)
class Shape:
    name: str
    summary: str  # one line for --help and the report
    size_label: str  # what its sizes count ("models", "union members", "routes per model")
    sizes: tuple[int, ...]  # by default
    quick_sizes: tuple[int, ...]  # with --quick
    max_size: int  # past it an app takes minutes to start on the 2-vCPU machines
    build: Callable[[AppSpec], AppSource]
    defer_build: bool = False  # measure the defer_build=True variant by default
    # Variants measured beside the shape itself, e.g. the union's "tagged" (members discriminated).
    variants: dict[str, str] = field(default_factory=dict)  # name -> what it changes
    size_step: int = 1  # sizes must be multiples of this (routes: a GET and a POST each)
    bound_s: float = 60.0  # a process that takes longer is "over" it, and larger sizes skipped


# A generated app's /health reports pydantic-core's version beside Pydantic's: some fixes (such as
# tagged unions' serialisation) landed in the core. Pydantic 1.10 has no core.
CORE_VERSION_SOURCE = (
    "try:  # Pydantic 2's compiled core; Pydantic 1.10 has none\n"
    "    from pydantic_core import __version__ as PYDANTIC_CORE\n"
    "except ImportError:\n"
    "    PYDANTIC_CORE = None\n"
)


def pydantic_import(idiom: str, *names: str) -> str:
    """The models module's Pydantic import in the idiom's spelling (pydantic.v1 for app_v1's,
    so it runs on Pydantic 1.10 and on Pydantic 2's pydantic.v1 alike)."""
    package = "pydantic.v1" if idiom == "v1" else "pydantic"
    return f"from {package} import {', '.join(names)}"


def config_first(spec: AppSpec) -> list[str]:
    """A model's first lines: Pydantic 2's configuration (from_attributes, and defer_build in
    its variant)."""
    if spec.idiom == "v1":
        return []
    options = "from_attributes=True" + (", defer_build=True" if spec.defer_build else "")
    return [f"    model_config = ConfigDict({options})", ""]


def config_last(spec: AppSpec) -> list[str]:
    """A model's last lines: Pydantic 1's configuration (orm_mode)."""
    if spec.idiom == "v2":
        return []
    return ["", "    class Config:", "        orm_mode = True"]


def get_and_post(
    group: int,
    path: str,
    name: str,
    number: str,
    example: dict[str, Any],
    expect: Callable[[dict[str, Any]], Any],
) -> list[Endpoint]:
    """The two routes of a model: GET answers its example with the id asked for, POST takes
    the model and answers it; `expect` turns what was sent into what must come back."""
    read_id = int(example["id"]) + 1000
    return [
        Endpoint(
            group,
            "get",
            f"{path}/{{item_id}}",
            name,
            f"read_{number}",
            "item_id: int",
            "Dict[str, Any]",
            f'return {{**EXAMPLES["{name}"], "id": item_id}}',
            (name,),
            f"{path}/{read_id}",
            None,
            expect({**example, "id": read_id}),
        ),
        Endpoint(
            group,
            "post",
            path,
            name,
            f"create_{number}",
            f"item: {name}",
            name,
            "return item",
            (name,),
            path,
            example,
            expect(example),
        ),
    ]


def node_head(name: str, spec: AppSpec) -> list[str]:
    """The first lines of a model of the referencing shapes (chain, recursive): its
    configuration, an id, a constrained name, a datetime and a number."""
    return [
        f"class {name}(BaseModel):",
        *config_first(spec),
        "    id: int",
        "    name: str = Field(min_length=1, max_length=80)",
        "    created_at: datetime",
        "    value: int = 0",
    ]


def referencing_module(
    spec: AppSpec, docstring: str, typing: str, sources: list[str], names: list[str]
) -> str:
    """A models module whose models refer to each other through forward references: every
    model rebuilt once all exist (`update_forward_refs()` in v1, `model_rebuild()` in v2)."""
    pydantic = (
        ("BaseModel", "Field") if spec.idiom == "v1" else ("BaseModel", "ConfigDict", "Field")
    )
    rebuild = "update_forward_refs" if spec.idiom == "v1" else "model_rebuild"
    body = "\n\n\n".join(sources)
    rebuilds = "\n".join(f"{name}.{rebuild}()" for name in names)
    return (
        f'"""{docstring}, {spec.idiom} idiom."""\n\n'
        "from datetime import datetime\n"
        f"from typing import {typing}\n\n"
        f"{pydantic_import(spec.idiom, *pydantic)}\n\n\n{body}\n\n\n"
        "# Every reference is resolved once every model exists.\n"
        f"{rebuilds}\n"
    )
