"""The recursive shape: self-referencing trees. Every model is a tree of itself (children, and a
favourite child), defined through forward references and rebuilt (`update_forward_refs()` in
v1, `model_rebuild()` in v2); its example is a tree three levels deep, two children a node.
Two routes a model."""

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

DEPTH = 3
FANOUT = 2


def tree(index: int) -> str:
    return f"Tree{index:04d}"


def model_source(index: int, spec: AppSpec) -> str:
    name = tree(index)
    lines = node_head(name, spec)
    lines += [
        f'    children: List["{name}"] = Field(default_factory=list)',
        f'    favourite: Optional["{name}"] = None',
    ]
    lines += config_last(spec)
    return "\n".join(lines)


def models_module(spec: AppSpec) -> str:
    names = [tree(index) for index in range(spec.size)]
    sources = [model_source(index, spec) for index in range(spec.size)]
    docstring = f"{spec.size} self-referencing tree models"
    return referencing_module(spec, docstring, "List, Optional", sources, names)


def example(index: int, depth: int = DEPTH, number: int = 0) -> dict[str, Any]:
    """A tree `depth` levels deep, FANOUT children a node, every field set."""
    children = (
        [example(index, depth - 1, number * FANOUT + child + 1) for child in range(FANOUT)]
        if depth > 1
        else []
    )
    return {
        "id": index if number == 0 else number,
        "name": f"tree {index} node {number}",
        "created_at": EXAMPLE_TIME,
        "value": number,
        "children": children,
        "favourite": None,
    }


def build(spec: AppSpec) -> AppSource:
    endpoints = []
    for index in range(spec.size):
        endpoints += get_and_post(
            index // MODELS_PER_ROUTER,
            f"/t{index}",
            tree(index),
            str(index),
            example(index),
            lambda values: values,
        )
    return AppSource(
        models_module(spec),
        {tree(index): example(index) for index in range(spec.size)},
        endpoints,
        spec.size,
    )


SHAPE = Shape(
    name="recursive",
    summary="self-referencing trees: every model a tree of itself (children and a favourite "
    "child), three levels deep in its examples; two routes a model",
    size_label="models",
    sizes=(10, 100, 500),
    quick_sizes=(10, 100, 500),
    max_size=2000,
    build=build,
)
