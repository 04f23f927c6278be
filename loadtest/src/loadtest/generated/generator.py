"""Generated apps at scale: a shape's models (shapes/) and their routes, in one arm's schema
idiom, written as source into a scratch folder. Deterministic: the same seed, shape, idiom and
size give the same files.

Idioms: `v1` (app_v1's) imports `pydantic.v1` (so it runs on Pydantic 1.10 and on Pydantic 2's
`pydantic.v1` alike), with `@validator` and `class Config: orm_mode = True`; `v2` (app_v2's)
`@field_validator`, `ConfigDict(from_attributes=True)` (and `defer_build=True` in the
defer-build variant), `@computed_field`.

Routes: each shape's endpoints, in one `APIRouter` per ten models, each included into an `/api`
router that the app includes, as real apps mount theirs (or, in the flat variant, the same
paths declared on the app itself); and `GET /health`, which reports the versions and the
counts.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadtest.generated.shapes import DEFAULT_SHAPE, SHAPES
from loadtest.generated.shapes.base import CORE_VERSION_SOURCE, AppSource, AppSpec, Endpoint

IDIOMS = ("v1", "v2")
PACKAGE = "scale_app"
MODULE = f"{PACKAGE}.main:app"


@dataclass(frozen=True)
class ScaleApp:
    """One generated app: its idiom, its shape and size (models, union members or routes per
    model: the shape's axis), whether its models defer building their validators until first
    use (Pydantic 2 only), and which variant of its shape it is."""

    idiom: str
    size: int
    defer_build: bool = False
    seed: int = 0
    flat: bool = False  # every route on the app itself: no APIRouter, no include_router
    shape: str = DEFAULT_SHAPE
    variant: str | None = None  # one of the shape's variants (union: "tagged")

    def __post_init__(self) -> None:
        if self.idiom not in IDIOMS:
            raise ValueError(f"idiom {self.idiom!r}: choose from {', '.join(IDIOMS)}")
        if self.shape not in SHAPES:
            raise ValueError(f"shape {self.shape!r}: choose from {', '.join(SHAPES)}")
        if self.size < 1:
            raise ValueError(f"size {self.size}: at least 1")
        if self.defer_build and self.idiom != "v2":
            raise ValueError("defer_build is Pydantic 2's: the v1 idiom has no such option")
        if self.variant is not None and self.variant not in SHAPES[self.shape].variants:
            raise ValueError(f"the {self.shape} shape has no variant {self.variant!r}")

    @property
    def slug(self) -> str:
        shape = "" if self.shape == DEFAULT_SHAPE else f"{self.shape}-"
        return (
            f"{shape}{self.idiom}-{'k' if self.shape == 'union' else 'm'}{self.size}"
            + (f"-{self.variant}" if self.variant else "")
            + ("-defer" if self.defer_build else "")
            + ("-flat" if self.flat else "")
        )

    @property
    def spec(self) -> AppSpec:
        return AppSpec(self.idiom, self.size, self.seed, self.defer_build, self.variant)

    def source(self) -> AppSource:
        return SHAPES[self.shape].build(self.spec)


@dataclass(frozen=True)
class Route:
    """One route to call once, and what it must answer."""

    method: str
    path: str
    body: Any
    expected: Any  # the JSON the answer must be (computed fields added)


def examples_module(examples: dict[str, Any]) -> str:
    return (
        '"""A valid instance of every model, as JSON (what the GET routes return)."""\n\n'
        "import json\n\n"
        f"EXAMPLES = json.loads({json.dumps(json.dumps(examples))})\n"
    )


def router_module(number: int, endpoints: list[Endpoint], flat: bool) -> str:
    names = ", ".join(dict.fromkeys(name for endpoint in endpoints for name in endpoint.uses))
    if flat:  # the app's own decorators, the full path in each
        owner, prefix = [f"from {PACKAGE}.application import app as router"], f"/api/g{number}"
    else:
        owner = ["from fastapi import APIRouter", ""]
        prefix = ""
    lines = [
        f'"""Routes of group {number}."""',
        "",
        "from typing import Any, Dict",
        "",
        *owner,
        f"from {PACKAGE}.examples import EXAMPLES",
        f"from {PACKAGE}.models import {names}",
    ]
    if not flat:
        lines += ["", f'router = APIRouter(prefix="/g{number}", tags=["group {number}"])']
    for endpoint in endpoints:
        lines += [
            "",
            "",
            f'@router.{endpoint.method}("{prefix}{endpoint.path}", '
            f"response_model={endpoint.response_model})",
            f"def {endpoint.function}({endpoint.parameters}) -> {endpoint.returns}:",
            f"    {endpoint.body}",
        ]
    return "\n".join(lines) + "\n"


def groups_of(source: AppSource) -> dict[int, list[Endpoint]]:
    groups: dict[int, list[Endpoint]] = {}
    for endpoint in source.endpoints:
        groups.setdefault(endpoint.group, []).append(endpoint)
    return dict(sorted(groups.items()))


def main_module(app: ScaleApp, source: AppSource) -> str:
    # As the lab's apps report it: Pydantic 2 validates in pydantic-core (Rust); Pydantic 1
    # code runs on 1.10's Cython-compiled wheel, or on Pydantic 2's pure-Python pydantic.v1.
    compiled = 'bool(getattr(pydantic.v1, "compiled", False))' if app.idiom == "v1" else "True"
    routers = [f"routes_{number:03d}" for number in groups_of(source)]
    routes = len(source.endpoints)
    imports = "\n".join(f"from {PACKAGE} import {name}" for name in routers)
    if app.flat:  # importing the modules declares their routes on the app
        mounting = (
            f"from {PACKAGE}.application import app\n{imports}  # noqa: F401\n\n"
            f"ROUTE_MODULES = ({', '.join(routers)},)\n"
        )
    else:
        includes = "\n".join(f"api.include_router({name}.router)" for name in routers)
        mounting = (
            f"{imports}\n\n"
            f"{application_source(app, source)}"
            'api = APIRouter(prefix="/api")\n'
            f"{includes}\n"
            "app.include_router(api)\n"
        )
    return (
        f'"""The generated app: {source.models} models, {routes} routes in {len(routers)} '
        f'{"modules, on the app itself" if app.flat else "routers"}."""\n\n'
        "import fastapi\n"
        "import pydantic\n"
        "import pydantic.v1\n"
        "from fastapi import APIRouter, FastAPI\n\n"
        f"{CORE_VERSION_SOURCE}\n\n"
        f"{mounting}\n\n"
        '@app.get("/health")\n'
        "def health() -> dict:\n"
        "    return {\n"
        '        "status": "ok",\n'
        f'        "models": {source.models},\n'
        f'        "routes": {routes},\n'
        '        "versions": {\n'
        '            "pydantic": pydantic.VERSION,\n'
        '            "fastapi": fastapi.__version__,\n'
        '            "pydantic_core": PYDANTIC_CORE,\n'
        '            "pydantic_v1": pydantic.v1.VERSION,\n'
        f'            "pydantic_compiled": {compiled},\n'
        "        },\n"
        "    }\n"
    )


def application_source(app: ScaleApp, source: AppSource) -> str:
    what = f"{source.models} models" if app.shape == DEFAULT_SHAPE else f"the {app.shape} shape"
    return f'app = FastAPI(title="Generated app: {what}, {app.idiom} idiom")\n'


def generate(app: ScaleApp, folder: Path) -> Path:
    """Write the app's package under `folder` (which goes on PYTHONPATH); returns `folder`."""
    source = app.source()
    package = folder / PACKAGE
    package.mkdir(parents=True, exist_ok=False)
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(source.models_module)
    (package / "examples.py").write_text(examples_module(source.examples))
    for number, endpoints in groups_of(source).items():
        (package / f"routes_{number:03d}.py").write_text(router_module(number, endpoints, app.flat))
    if app.flat:
        (package / "application.py").write_text(
            "from fastapi import FastAPI\n\n" + application_source(app, source)
        )
    (package / "main.py").write_text(main_module(app, source))
    return folder


def routes_of(app: ScaleApp) -> list[Route]:
    """Every route of the app, each with the request that exercises it."""
    return [
        Route(
            endpoint.method.upper(),
            f"/api/g{endpoint.group}{endpoint.call_path}",
            endpoint.request,
            endpoint.expected,
        )
        for endpoint in app.source().endpoints
    ]
