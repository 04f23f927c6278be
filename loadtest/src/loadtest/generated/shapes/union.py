"""The union shape: fields whose type is a union of K models. Every member carries a distinct
required `Literal` tag (`kind`), so both majors can pick one member only: Pydantic 1.10 takes
the first member that validates, coercing; Pydantic 2's smart mode the best match. The tagged
variant discriminates the union by that tag (`Field(discriminator="kind")`), which both majors
support. HOLDERS models hold one member and a list of them; two routes each."""

from typing import Any

from loadtest.generated.shapes.base import (
    MODELS_PER_ROUTER,
    AppSource,
    AppSpec,
    Shape,
    config_first,
    config_last,
    get_and_post,
    pydantic_import,
)

HOLDERS = 100


def variant(index: int) -> str:
    return f"Variant{index:02d}"


def holder(index: int) -> str:
    return f"Holder{index:02d}"


def tag(index: int) -> str:
    return f"v{index:02d}"


def variant_source(index: int, spec: AppSpec) -> str:
    lines = [f"class {variant(index)}(BaseModel):", *config_first(spec)]
    lines += [
        f'    kind: Literal["{tag(index)}"]',
        "    id: int",
        "    name: str = Field(min_length=1, max_length=80)",
        f"    weight_{index:02d}: float = 0.0",
        "    note: Optional[str] = None",
    ]
    return "\n".join(lines + config_last(spec))


def holder_source(index: int, spec: AppSpec) -> str:
    lines = [f"class {holder(index)}(BaseModel):", *config_first(spec)]
    lines += [
        "    id: int",
        "    item: AnyVariant",
        "    items: List[AnyVariant] = Field(default_factory=list)",
    ]
    return "\n".join(lines + config_last(spec))


def models_module(spec: AppSpec) -> str:
    names = "BaseModel, Field" if spec.idiom == "v1" else "BaseModel, ConfigDict, Field"
    members = ", ".join(variant(index) for index in range(spec.size))
    union = f"Union[{members}]"
    tagged = spec.variant == "tagged"
    alias = f'Annotated[{union}, Field(discriminator="kind")]' if tagged else union
    variants = "\n\n\n".join(variant_source(index, spec) for index in range(spec.size))
    holders = "\n\n\n".join(holder_source(index, spec) for index in range(HOLDERS))
    kind = "discriminated by their tag" if tagged else "plain"
    return (
        f'"""{HOLDERS} models holding a union of {spec.size} members ({kind}), '
        f'{spec.idiom} idiom."""\n\n'
        "from typing import Annotated, List, Literal, Optional, Union\n\n"
        f"{pydantic_import(spec.idiom, *names.split(', '))}\n\n\n{variants}\n\n\n"
        f"AnyVariant = {alias}\n\n\n{holders}\n"
    )


def variant_example(index: int) -> dict[str, Any]:
    return {
        "kind": tag(index),
        "id": index,
        "name": f"variant {index}",
        f"weight_{index:02d}": 1.5,
        "note": None,
    }


def holder_example(index: int, members: int) -> dict[str, Any]:
    return {
        "id": index,
        "item": variant_example(index % members),
        "items": [variant_example((index + step) % members) for step in (1, 2)],
    }


def build(spec: AppSpec) -> AppSource:
    if spec.size < 2:
        raise ValueError("a union has at least 2 members")
    endpoints = []
    for index in range(HOLDERS):
        endpoints += get_and_post(
            index // MODELS_PER_ROUTER,
            f"/h{index}",
            holder(index),
            str(index),
            holder_example(index, spec.size),
            lambda values: values,  # every member's every field is in the example
        )
    return AppSource(
        models_module(spec),
        {holder(index): holder_example(index, spec.size) for index in range(HOLDERS)},
        endpoints,
        spec.size + HOLDERS,
    )


SHAPE = Shape(
    name="union",
    summary=f"{HOLDERS} models holding a union of K models (each with a distinct Literal tag) "
    "and a list of them, plain and discriminated; two routes a model",
    size_label="union members",
    sizes=(2, 20),
    quick_sizes=(2, 20),
    max_size=200,
    build=build,
    variants={"tagged": "the union discriminated by the members' tag"},
)
