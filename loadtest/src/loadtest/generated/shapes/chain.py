"""The chain shape: interconnected models. Each model refers to the three before it and, through
forward references, to the next one and back to the first, so the models form one cycle;
every model is rebuilt once all are defined (`update_forward_refs()` in v1, `model_rebuild()`
in v2). Its `backward` variant keeps only the references to the three before it: the chain of
pydantic#13545, fixed by pydantic#13523 ("in a chain of models each referencing the previous
three, a single model class 25 levels deep took 16 seconds to create, and a 300-model chain
could not finish building at all"). Two routes a model."""

from typing import Any

from loadtest.generated.shapes.base import (
    EXAMPLE_TIME,
    MODELS_PER_ROUTER,
    AppSource,
    AppSpec,
    Shape,
    config_last,
    get_and_post,
    node_head,
    referencing_module,
)

BEFORE = 3  # how many earlier models each one refers to


def node(index: int) -> str:
    return f"Node{index:04d}"


def references(index: int, count: int, backward: bool) -> list[tuple[str, int]]:
    """(field, target) of the model's references: the three before it, and unless `backward`
    the next one and the first."""
    found = [(f"prev_{k}", index - k) for k in range(1, BEFORE + 1) if index - k >= 0]
    if not backward and index + 1 < count:
        found.append(("next", index + 1))
    if not backward and index > 0:
        found.append(("first", 0))
    return found


def model_source(index: int, count: int, spec: AppSpec) -> str:
    backward = spec.variant == "backward"
    lines = node_head(node(index), spec)
    lines += [
        f'    {field}: Optional["{node(target)}"] = None'
        for field, target in references(index, count, backward)
    ]
    lines += config_last(spec)
    return "\n".join(lines)


def models_module(spec: AppSpec) -> str:
    names = [node(index) for index in range(spec.size)]
    sources = [model_source(index, spec.size, spec) for index in range(spec.size)]
    kind = "backward only" if spec.variant == "backward" else "forward and backward"
    return referencing_module(
        spec, f"A chain of {spec.size} interconnected models ({kind})", "Optional", sources, names
    )


def bare(index: int, count: int, backward: bool) -> dict[str, Any]:
    """A model with no reference set: every reference null, as the app answers it."""
    values: dict[str, Any] = {
        "id": index,
        "name": f"node {index}",
        "created_at": EXAMPLE_TIME,
        "value": index,
    }
    return values | {field: None for field, _ in references(index, count, backward)}


def example(index: int, count: int, backward: bool) -> dict[str, Any]:
    """A model whose previous model is set (itself bare): two levels of the chain."""
    values = bare(index, count, backward)
    if index > 0:
        values["prev_1"] = bare(index - 1, count, backward)
    return values


def build(spec: AppSpec) -> AppSource:
    count, backward = spec.size, spec.variant == "backward"
    endpoints = []
    for index in range(count):
        endpoints += get_and_post(
            index // MODELS_PER_ROUTER,
            f"/n{index}",
            node(index),
            str(index),
            example(index, count, backward),
            lambda values: values,  # every field is in the example: it comes back as sent
        )
    return AppSource(
        models_module(spec),
        {node(index): example(index, count, backward) for index in range(count)},
        endpoints,
        count,
    )


SHAPE = Shape(
    name="chain",
    summary="interconnected models: each refers to the three before it, the next and the "
    "first (forward references, rebuilt once all exist); two routes a model",
    variants={"backward": "each model refers only to the three before it (pydantic#13545)"},
    size_label="models",
    sizes=(10, 100, 300),
    quick_sizes=(10, 300),
    max_size=1000,
    build=build,
)
