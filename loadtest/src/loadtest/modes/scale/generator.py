"""Generated apps at scale: M models and two routes per model, in one arm's schema idiom, written
as source into a scratch folder. Deterministic: the same seed, idiom and M give the same files.

The mix is a service's: every model has an id, a constrained name and a datetime; the others
draw from optional text, enums, lists, numbers with bounds, booleans and nested models (a model
nests only earlier models, at most two levels deep, so every example stays small). Every third
model has a validator, every fourth a computed field, each spelt as its major spells it:

- `v1` idiom (app_v1's): `pydantic.v1` imports (so it runs on Pydantic 1.10 and on Pydantic 2's
  `pydantic.v1` alike), `@validator`, `class Config: orm_mode = True`, and the computed field
  as an `always=True` validator;
- `v2` idiom (app_v2's): `@field_validator`, `ConfigDict(from_attributes=True)` (and
  `defer_build=True` in the defer-build variant), `@computed_field`.

Routes: per model `GET /api/g<k>/m<i>/{item_id}` (the model as response_model) and
`POST /api/g<k>/m<i>` (the model as body and response_model), in one `APIRouter` per ten models,
each included into an `/api` router that the app includes, as real apps mount theirs (or, in the
flat variant, the same paths declared on the app itself); and `GET /health`, which reports the
versions and the counts.
"""

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

IDIOMS = ("v1", "v2")
PACKAGE = "scale_app"
MODULE = f"{PACKAGE}.main:app"
MODELS_PER_ROUTER = 10
MAX_NESTING = 2  # levels of nested models below a model
EXAMPLE_TIME = "2024-05-01T08:00:00+00:00"

ENUMS = {
    "Status": ("draft", "published", "archived"),
    "Priority": ("low", "medium", "high", "urgent"),
    "Region": ("eu", "us", "apac"),
}
# Field kinds a model draws from, besides id, name and created_at (which every model has).
KINDS = ("optional_text", "enum", "tags", "score", "count", "flag", "nested", "nested_list")


@dataclass(frozen=True)
class ScaleApp:
    """One generated app: its idiom, how many models, and whether its models defer building
    their validators until first use (Pydantic 2 only)."""

    idiom: str
    models: int
    defer_build: bool = False
    seed: int = 0
    flat: bool = False  # every route on the app itself: no APIRouter, no include_router

    def __post_init__(self) -> None:
        if self.idiom not in IDIOMS:
            raise ValueError(f"idiom {self.idiom!r}: choose from {', '.join(IDIOMS)}")
        if self.models < 1:
            raise ValueError(f"{self.models} models: at least 1")
        if self.defer_build and self.idiom != "v2":
            raise ValueError("defer_build is Pydantic 2's: the v1 idiom has no such option")

    @property
    def slug(self) -> str:
        return (
            f"{self.idiom}-m{self.models}"
            + ("-defer" if self.defer_build else "")
            + ("-flat" if self.flat else "")
        )

    @property
    def routers(self) -> int:
        return -(-self.models // MODELS_PER_ROUTER)

    @property
    def routes(self) -> int:
        """Routes that use the models (two per model), /health not counted."""
        return 2 * self.models


@dataclass(frozen=True)
class Field:
    name: str
    kind: str
    target: int | None = None  # the nested model's index


@dataclass(frozen=True)
class Model:
    index: int
    fields: tuple[Field, ...]
    validator: bool
    computed: bool
    depth: int  # levels of nested models below it

    @property
    def name(self) -> str:
        return f"Model{self.index:04d}"


def plan_models(count: int, seed: int) -> list[Model]:
    random_source = random.Random(f"scale-{seed}")
    models: list[Model] = []
    for index in range(count):
        nestable = [model for model in models if model.depth < MAX_NESTING]
        kinds = random_source.sample(KINDS, k=random_source.randint(2, 6))
        fields = []
        depth = 0
        for position, kind in enumerate(kinds):
            if kind in ("nested", "nested_list"):
                if not nestable:
                    continue
                target = random_source.choice(nestable[-20:])  # nearby, as modules nest theirs
                depth = max(depth, target.depth + 1)
                fields.append(Field(f"{kind}_{position}", kind, target.index))
            else:
                fields.append(Field(f"{kind}_{position}", kind))
        models.append(Model(index, tuple(fields), index % 3 == 0, index % 4 == 0, depth))
    return models


def enum_of(field: Field) -> str:
    return list(ENUMS)[int(field.name.rsplit("_", 1)[1]) % len(ENUMS)]


def annotation(field: Field, models: list[Model]) -> str:
    """The field's annotation and default, alike in both majors."""
    if field.kind == "optional_text":
        return "Optional[str] = Field(None, max_length=200)"
    if field.kind == "enum":
        enum = enum_of(field)
        return f"{enum} = {enum}.{ENUMS[enum][0]}"
    if field.kind == "tags":
        return "List[str] = Field(default_factory=list, max_items=10)"
    if field.kind == "score":
        return "float = Field(0.0, ge=0, le=100)"
    if field.kind == "count":
        return "int = Field(0, ge=0)"
    if field.kind == "flag":
        return "bool = False"
    assert field.target is not None
    target = models[field.target].name
    if field.kind == "nested":
        return target
    return f"List[{target}] = Field(default_factory=list)"


def model_source(model: Model, models: list[Model], app: ScaleApp) -> str:
    lines = [f"class {model.name}(BaseModel):"]
    if app.idiom == "v2":
        options = "from_attributes=True" + (", defer_build=True" if app.defer_build else "")
        lines += [f"    model_config = ConfigDict({options})", ""]
    lines += [
        "    id: int",
        "    name: str = Field(min_length=1, max_length=80)",
        "    created_at: datetime",
    ]
    for field in model.fields:
        source = annotation(field, models)
        if app.idiom == "v2":
            source = source.replace("max_items=", "max_length=")
        lines.append(f"    {field.name}: {source}")
    if model.computed and app.idiom == "v1":
        lines.append('    label: str = ""')
    if model.validator:
        decorator = '@validator("name")' if app.idiom == "v1" else '@field_validator("name")'
        lines += ["", f"    {decorator}"]
        if app.idiom == "v2":
            lines.append("    @classmethod")
        lines += [
            "    def name_is_not_blank(cls, value: str) -> str:",
            "        if not value.strip():",
            '            raise ValueError("must not be blank")',
            "        return value.strip()",
        ]
    if model.computed:
        if app.idiom == "v1":
            lines += [
                "",
                '    @validator("label", always=True)',
                "    def compute_label(cls, _value: Any, values: Dict[str, Any]) -> str:",
                "        return f\"{values.get('name')}#{values.get('id')}\"",
            ]
        else:
            lines += [
                "",
                "    @computed_field  # type: ignore[prop-decorator]",
                "    @property",
                "    def label(self) -> str:",
                '        return f"{self.name}#{self.id}"',
            ]
    if app.idiom == "v1":
        lines += ["", "    class Config:", "        orm_mode = True"]
    return "\n".join(lines)


def models_module(models: list[Model], app: ScaleApp) -> str:
    if app.idiom == "v1":
        pydantic_import = "from pydantic.v1 import BaseModel, Field, validator"
    else:
        pydantic_import = (
            "from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator"
        )
    enums = "\n\n\n".join(
        f"class {name}(str, Enum):\n" + "\n".join(f'    {value} = "{value}"' for value in values)
        for name, values in ENUMS.items()
    )
    body = "\n\n\n".join(model_source(model, models, app) for model in models)
    return (
        f'"""{app.models} generated models, {app.idiom} idiom (seed {app.seed})."""\n\n'
        "from datetime import datetime\n"
        "from enum import Enum\n"
        "from typing import Any, Dict, List, Optional\n\n"
        f"{pydantic_import}\n\n\n{enums}\n\n\n{body}\n"
    )


def example(model: Model, models: list[Model]) -> dict[str, Any]:
    """A valid instance of the model, as JSON: what a GET returns and a POST sends."""
    values: dict[str, Any] = {
        "id": model.index,
        "name": f"item {model.index}",
        "created_at": EXAMPLE_TIME,
    }
    for field in model.fields:
        if field.kind == "optional_text":
            values[field.name] = f"note {model.index}"
        elif field.kind == "enum":
            values[field.name] = ENUMS[enum_of(field)][-1]
        elif field.kind == "tags":
            values[field.name] = ["alpha", "beta"]
        elif field.kind == "score":
            values[field.name] = 42.5
        elif field.kind == "count":
            values[field.name] = 7
        elif field.kind == "flag":
            values[field.name] = True
        else:
            assert field.target is not None
            nested = example(models[field.target], models)
            values[field.name] = nested if field.kind == "nested" else [nested, nested]
    return values


def examples_module(models: list[Model]) -> str:
    examples = {model.name: example(model, models) for model in models}
    return (
        '"""A valid instance of every model, as JSON (what the GET routes return)."""\n\n'
        "import json\n\n"
        f"EXAMPLES = json.loads({json.dumps(json.dumps(examples))})\n"
    )


def router_module(number: int, models: list[Model], flat: bool) -> str:
    names = ", ".join(model.name for model in models)
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
    for model in models:
        lines += [
            "",
            "",
            f'@router.get("{prefix}/m{model.index}/{{item_id}}", response_model={model.name})',
            f"def read_{model.index}(item_id: int) -> Dict[str, Any]:",
            f'    return {{**EXAMPLES["{model.name}"], "id": item_id}}',
            "",
            "",
            f'@router.post("{prefix}/m{model.index}", response_model={model.name})',
            f"def create_{model.index}(item: {model.name}) -> {model.name}:",
            "    return item",
        ]
    return "\n".join(lines) + "\n"


def main_module(app: ScaleApp) -> str:
    # As the lab's apps report it: Pydantic 2 validates in pydantic-core (Rust); Pydantic 1
    # code runs on 1.10's Cython-compiled wheel, or on Pydantic 2's pure-Python pydantic.v1.
    compiled = 'bool(getattr(pydantic.v1, "compiled", False))' if app.idiom == "v1" else "True"
    routers = [f"routes_{number:03d}" for number in range(app.routers)]
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
            f"{application_source(app)}"
            'api = APIRouter(prefix="/api")\n'
            f"{includes}\n"
            "app.include_router(api)\n"
        )
    return (
        f'"""The generated app: {app.models} models, {app.routes} routes in {app.routers} '
        f'{"modules, on the app itself" if app.flat else "routers"}."""\n\n'
        "import fastapi\n"
        "import pydantic\n"
        "import pydantic.v1\n"
        "from fastapi import APIRouter, FastAPI\n\n"
        f"{mounting}\n\n"
        '@app.get("/health")\n'
        "def health() -> dict:\n"
        "    return {\n"
        '        "status": "ok",\n'
        f'        "models": {app.models},\n'
        f'        "routes": {app.routes},\n'
        '        "versions": {\n'
        '            "pydantic": pydantic.VERSION,\n'
        '            "fastapi": fastapi.__version__,\n'
        '            "pydantic_v1": pydantic.v1.VERSION,\n'
        f'            "pydantic_compiled": {compiled},\n'
        "        },\n"
        "    }\n"
    )


def application_source(app: ScaleApp) -> str:
    return f'app = FastAPI(title="Generated app: {app.models} models, {app.idiom} idiom")\n'


def generate(app: ScaleApp, folder: Path) -> Path:
    """Write the app's package under `folder` (which goes on PYTHONPATH); returns `folder`."""
    models = plan_models(app.models, app.seed)
    package = folder / PACKAGE
    package.mkdir(parents=True, exist_ok=False)
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(models_module(models, app))
    (package / "examples.py").write_text(examples_module(models))
    for number in range(app.routers):
        group = models[number * MODELS_PER_ROUTER : (number + 1) * MODELS_PER_ROUTER]
        (package / f"routes_{number:03d}.py").write_text(router_module(number, group, app.flat))
    if app.flat:
        (package / "application.py").write_text(
            "from fastapi import FastAPI\n\n" + application_source(app)
        )
    (package / "main.py").write_text(main_module(app))
    return folder


@dataclass(frozen=True)
class Route:
    """One route to call once, and what it must answer."""

    method: str
    path: str
    body: dict[str, Any] | None
    expected: dict[str, Any]  # the JSON the answer must hold (computed fields added)


def expected_answer(model: Model, models: list[Model], values: dict[str, Any]) -> dict:
    """What the app answers for `values`: the computed label added, nested models too."""
    answer = dict(values)
    for field in model.fields:
        if field.target is None:
            continue
        target = models[field.target]
        if field.kind == "nested":
            answer[field.name] = expected_answer(target, models, values[field.name])
        else:
            answer[field.name] = [
                expected_answer(target, models, item) for item in values[field.name]
            ]
    if model.computed:
        answer["label"] = f"{values['name']}#{values['id']}"
    return answer


def routes_of(app: ScaleApp) -> list[Route]:
    """Every route of the app, each with the request that exercises it."""
    models = plan_models(app.models, app.seed)
    found = []
    for model in models:
        prefix = f"/api/g{model.index // MODELS_PER_ROUTER}/m{model.index}"
        values = example(model, models)
        read_id = model.index + 1000
        found += [
            Route(
                "GET",
                f"{prefix}/{read_id}",
                None,
                expected_answer(model, models, values | {"id": read_id}),
            ),
            Route("POST", prefix, values, expected_answer(model, models, values)),
        ]
    return found
