"""The model shapes the scale mode generates, one module each: a shape turns an app's idiom,
size and seed into the source of its models, the JSON of its examples and its endpoints
(generator.py writes them into an app). `service` is the benign mix a service starts with;
the others are the shapes users reported trouble with after moving to Pydantic 2."""

from loadtest.generated.shapes import chain, generic, recursive, routes, service, union
from loadtest.generated.shapes.base import Shape
from loadtest.lab.errors import LabError

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


def checked_sizes(
    shape_name: str, sizes: tuple[int, ...], option: str = "--sizes"
) -> tuple[int, ...]:
    """The sizes the shape can build, or one line naming the first it cannot (and the option
    that named it)."""
    shape = SHAPES[shape_name]
    for size in sizes:
        if size > shape.max_size:
            raise LabError(
                f"{option} {size}: the {shape_name} shape takes at most {shape.max_size} "
                f"{shape.size_label}"
            )
        if size % shape.size_step:
            raise LabError(
                f"{option} {size}: the {shape_name} shape's {shape.size_label} come in "
                f"multiples of {shape.size_step}"
            )
        if shape_name == "union" and size < 2:
            raise LabError(f"{option} 1: a union has at least 2 members")
    return sizes
