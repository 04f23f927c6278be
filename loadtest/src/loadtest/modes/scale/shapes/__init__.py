"""The model shapes the scale mode generates, one module each: a shape turns an app's idiom,
size and seed into the source of its models, the JSON of its examples and its endpoints
(generator.py writes them into an app). `service` is the benign mix a service starts with;
the others are the shapes users reported trouble with after moving to Pydantic 2."""

from loadtest.modes.scale.shapes import chain, generic, recursive, routes, service, union
from loadtest.modes.scale.shapes.base import Shape

SHAPES: dict[str, Shape] = {
    shape.name: shape
    for shape in (
        service.SHAPE,
        chain.SHAPE,
        recursive.SHAPE,
        generic.SHAPE,
        union.SHAPE,
        routes.SHAPE,
    )
}
SHAPE_NAMES = tuple(SHAPES)
DEFAULT_SHAPE = service.SHAPE.name
