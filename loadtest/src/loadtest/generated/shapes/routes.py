"""The routes shape: 100 models of the service mix with R routes each (R/2 GETs answering the
model and R/2 POSTs taking it), for what FastAPI builds per route (pydantic#6620 and #9982:
memory grew with the number of endpoints, a TypeAdapter per route field)."""

from functools import partial

from loadtest.generated.shapes import service
from loadtest.generated.shapes.base import (
    MODELS_PER_ROUTER,
    AppSource,
    AppSpec,
    Endpoint,
    Shape,
    get_and_post,
)

MODELS = 100


def build(spec: AppSpec) -> AppSource:
    if spec.size % 2:
        raise ValueError(f"{spec.size} routes per model: an even number (a GET and a POST each)")
    models = service.plan_models(MODELS, spec.seed)
    endpoints: list[Endpoint] = []
    for model in models:
        for route in range(spec.size // 2):
            endpoints += get_and_post(
                model.index // MODELS_PER_ROUTER,
                f"/m{model.index}/r{route}",
                model.name,
                f"{model.index}_{route}",
                service.example(model, models),
                partial(service.expected_answer, model, models),
            )
    return AppSource(
        service.models_module(models, spec),
        {model.name: service.example(model, models) for model in models},
        endpoints,
        MODELS,
    )


SHAPE = Shape(
    name="routes",
    summary=f"{MODELS} models of the service mix with R routes each, half GET, half POST",
    size_label="routes per model",
    sizes=(2, 20),
    quick_sizes=(2, 20),
    max_size=100,
    build=build,
    size_step=2,
)
