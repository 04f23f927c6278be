"""The service shape: the benign mix a service starts with, scale's default. Every model has an
id, a constrained name and a datetime; the others draw from optional text, enums, lists,
numbers with bounds, booleans and nested models (a model nests only earlier models, at most two
levels deep, so every example stays small). Every third model has a validator, every fourth a
computed field, each spelt as its major spells it (v1: `@validator`, the computed field an
`always=True` validator; v2: `@field_validator`, `@computed_field`). Two routes a model."""

import random
from dataclasses import dataclass
from functools import partial
from typing import Any

from loadtest.generated.shapes.base import (
    EXAMPLE_TIME,
    MODELS_PER_ROUTER,
    AppSource,
    AppSpec,
    Shape,
    config_first,
    config_last,
    get_and_post,
    pydantic_import,
)

MAX_NESTING = 2  # levels of nested models below a model
ENUMS = {
    "Status": ("draft", "published", "archived"),
    "Priority": ("low", "medium", "high", "urgent"),
    "Region": ("eu", "us", "apac"),
}
# Field kinds a model draws from, besides id, name and created_at (which every model has).
KINDS = ("optional_text", "enum", "tags", "score", "count", "flag", "nested", "nested_list")


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


def model_source(model: Model, models: list[Model], spec: AppSpec) -> str:
    lines = [f"class {model.name}(BaseModel):", *config_first(spec)]
    lines += [
        "    id: int",
        "    name: str = Field(min_length=1, max_length=80)",
        "    created_at: datetime",
    ]
    for field in model.fields:
        source = annotation(field, models)
        if spec.idiom == "v2":
            source = source.replace("max_items=", "max_length=")
        lines.append(f"    {field.name}: {source}")
    if model.computed and spec.idiom == "v1":
        lines.append('    label: str = ""')
    if model.validator:
        decorator = '@validator("name")' if spec.idiom == "v1" else '@field_validator("name")'
        lines += ["", f"    {decorator}"]
        if spec.idiom == "v2":
            lines.append("    @classmethod")
        lines += [
            "    def name_is_not_blank(cls, value: str) -> str:",
            "        if not value.strip():",
            '            raise ValueError("must not be blank")',
            "        return value.strip()",
        ]
    if model.computed:
        if spec.idiom == "v1":
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
    lines += config_last(spec)
    return "\n".join(lines)


def enums_source() -> str:
    return "\n\n\n".join(
        f"class {name}(str, Enum):\n" + "\n".join(f'    {value} = "{value}"' for value in values)
        for name, values in ENUMS.items()
    )


def models_module(models: list[Model], spec: AppSpec, extra: str = "") -> str:
    """The models, with `extra` source after them (the generic shape's page model)."""
    if spec.idiom == "v1":
        pydantic = pydantic_import("v1", "BaseModel", "Field", "validator")
    else:
        pydantic = pydantic_import(
            "v2", "BaseModel", "ConfigDict", "Field", "computed_field", "field_validator"
        )
    body = "\n\n\n".join(model_source(model, models, spec) for model in models)
    return (
        f'"""{len(models)} generated models, {spec.idiom} idiom (seed {spec.seed})."""\n\n'
        "from datetime import datetime\n"
        "from enum import Enum\n"
        "from typing import Any, Dict, List, Optional\n\n"
        f"{pydantic}\n\n\n{enums_source()}\n\n\n{body}\n{extra}"
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


def build(spec: AppSpec) -> AppSource:
    models = plan_models(spec.size, spec.seed)
    endpoints = []
    for model in models:
        endpoints += get_and_post(
            model.index // MODELS_PER_ROUTER,
            f"/m{model.index}",
            model.name,
            str(model.index),
            example(model, models),
            partial(expected_answer, model, models),
        )
    return AppSource(
        models_module(models, spec),
        {model.name: example(model, models) for model in models},
        endpoints,
        len(models),
    )


SHAPE = Shape(
    name="service",
    summary="a service's benign mix: nested models at most two levels deep, enums, lists, "
    "bounded numbers, a validator every third model, a computed field every fourth; two routes "
    "a model",
    size_label="models",
    sizes=(10, 100, 500),
    quick_sizes=(10, 100, 500),
    max_size=2000,
    build=build,
    defer_build=True,
)
