"""The generic shape: a page of items, `Page[T]`, for every model of the service mix, the common
FastAPI idiom for lists; spelt `GenericModel, Generic[T]` in v1 (pydantic.v1.generics) and
`BaseModel, Generic[T]` in v2. Per model: GET answers a `Page[Model]`, POST takes one and
answers it."""

from typing import Any

from loadtest.generated.shapes import service
from loadtest.generated.shapes.base import (
    MODELS_PER_ROUTER,
    AppSource,
    AppSpec,
    Endpoint,
    Shape,
    config_first,
    config_last,
)


def page_source(spec: AppSpec) -> str:
    if spec.idiom == "v1":
        head = [
            "from pydantic.v1.generics import GenericModel",
            "",
            'T = TypeVar("T")',
            "",
            "",
            "class Page(GenericModel, Generic[T]):",
        ]
    else:
        head = ['T = TypeVar("T")', "", "", "class Page(BaseModel, Generic[T]):"]
    lines = [
        "",
        "",
        "# The page every list answer comes in.",
        "from typing import Generic, TypeVar  # noqa: E402",
        *head,
        *config_first(spec),
        "    items: List[T]",
        "    total: int",
        "    page: int = 1",
        *config_last(spec),
    ]
    return "\n".join(lines) + "\n"


def page_of(item: Any) -> dict[str, Any]:
    return {"items": [item], "total": 1, "page": 1}


def endpoints_of(model: service.Model, models: list[service.Model]) -> list[Endpoint]:
    name, index = model.name, model.index
    page = f"Page[{name}]"
    values = service.example(model, models)
    read_id = index + 1000
    return [
        Endpoint(
            index // MODELS_PER_ROUTER,
            "get",
            f"/m{index}/{{item_id}}",
            page,
            f"read_{index}",
            "item_id: int",
            "Dict[str, Any]",
            f'return {{"items": [{{**EXAMPLES["{name}"], "id": item_id}}], "total": 1, "page": 1}}',
            ("Page", name),
            f"/m{index}/{read_id}",
            None,
            page_of(service.expected_answer(model, models, values | {"id": read_id})),
        ),
        Endpoint(
            index // MODELS_PER_ROUTER,
            "post",
            f"/m{index}",
            page,
            f"create_{index}",
            f"item: {page}",
            page,
            "return item",
            ("Page", name),
            f"/m{index}",
            page_of(values),
            page_of(service.expected_answer(model, models, values)),
        ),
    ]


def build(spec: AppSpec) -> AppSource:
    models = service.plan_models(spec.size, spec.seed)
    endpoints = [endpoint for model in models for endpoint in endpoints_of(model, models)]
    return AppSource(
        service.models_module(models, spec, extra=page_source(spec)),
        {model.name: service.example(model, models) for model in models},
        endpoints,
        len(models) + 1,
    )


SHAPE = Shape(
    name="generic",
    summary="a generic page, Page[T], for every model of the service mix (GenericModel in "
    "v1, BaseModel with Generic[T] in v2); GET answers a page, POST takes one",
    size_label="models",
    sizes=(10, 100, 500),
    quick_sizes=(10, 100, 500),
    max_size=2000,
    build=build,
)
