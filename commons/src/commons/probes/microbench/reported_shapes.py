"""Group 4: two shapes users reported after moving to Pydantic 2, in-process, in each arm's own
environment: a model dumped to JSON with a union field (pydantic#12912: "`model_dump_json` 3.4x
slower with a union field; discriminated unions show zero benefit over plain unions"), and one
row validated by `parse_obj_as` at every call against a reused adapter (fern-api/fern#16013:
building the adapter took 256.6 µs against 1.7 µs of validation)."""

import importlib
import warnings
from collections.abc import Callable
from typing import Annotated, Any, Literal

from commons.probes.microbench.benchmark import Benchmark, MicrobenchError

VALUES = 10_000  # the union member's list, as in pydantic#12912's first case


def shapes_group(package: str) -> list[Benchmark]:
    """`package`: app_v1 (its code on pydantic.v1: Pydantic 1.10, or Pydantic 2's pydantic.v1)
    or app_v2 (Pydantic 2); the models are spelt in that idiom."""
    v1 = package == "app_v1"
    # The idiom's own Pydantic, typed loosely: the two majors' classes are not one type.
    pydantic: Any = importlib.import_module("pydantic.v1" if v1 else "pydantic")
    BaseModel: Any = pydantic.BaseModel
    Field: Any = pydantic.Field
    if v1:
        parse_obj_as = pydantic.parse_obj_as

        def dump(model: Any) -> str:
            return str(model.json())

        def reused_adapter() -> Callable[[Any], Any]:
            # Pydantic 1.10 caches the model parse_obj_as builds: the same call is its
            # reusable way.
            return lambda data: parse_obj_as(list[Row], data)

    else:
        parse_obj_as = importlib.import_module("pydantic.deprecated.tools").parse_obj_as
        warnings.filterwarnings("ignore", message=".*parse_obj_as.*")

        def dump(model: Any) -> str:
            return str(model.model_dump_json())

        def reused_adapter() -> Callable[[Any], Any]:
            return pydantic.TypeAdapter(list[Row]).validate_python

    class Payload(BaseModel):
        kind: Literal["payload"]
        values: list[int]

    class Words(BaseModel):
        kind: Literal["words"]
        values: list[str]

    class Label(BaseModel):
        kind: Literal["label"]
        label: str

    members = Payload | Words | Label

    class NoUnion(BaseModel):
        value: Payload

    class PlainUnion(BaseModel):
        value: members

    class TaggedUnion(BaseModel):
        value: Annotated[members, Field(discriminator="kind")]

    class Row(BaseModel):
        id: int
        name: str = Field(min_length=1, max_length=80)
        score: float = Field(ge=0, le=100)
        tags: list[str] = Field(default_factory=list)

    data = {"kind": "payload", "values": list(range(VALUES))}
    models = {"none": NoUnion(value=data), "plain": PlainUnion(value=data)}
    models["tagged"] = TaggedUnion(value=data)
    dumped = {name: dump(model) for name, model in models.items()}
    if len(set(dumped.values())) != 1:
        raise MicrobenchError("shapes: the three models do not dump the same JSON")
    rows = [{"id": 1, "name": "row 1", "score": 42.5, "tags": ["alpha", "beta"]}]
    adapter = reused_adapter()
    if parse_obj_as(list[Row], rows) != adapter(rows):
        raise MicrobenchError("shapes: parse_obj_as and the adapter validate differently")
    return [
        Benchmark(
            "shapes",
            "union_none",
            f"dump to JSON, no union ({VALUES:,} ints)",
            lambda: dump(models["none"]),
            baseline="union_none",
        ),
        Benchmark(
            "shapes",
            "union_plain",
            "the same in a plain union of 3 members",
            lambda: dump(models["plain"]),
            baseline="union_none",
        ),
        Benchmark(
            "shapes",
            "union_tagged",
            "the same in a discriminated union of 3",
            lambda: dump(models["tagged"]),
            baseline="union_none",
        ),
        Benchmark(
            "shapes",
            "rows_adapter",
            "1 row by a reused adapter (v1: parse_obj_as, cached)",
            lambda: adapter(rows),
            baseline="rows_adapter",
        ),
        Benchmark(
            "shapes",
            "rows_parse_obj_as",
            "1 row by parse_obj_as at every call",
            lambda: parse_obj_as(list[Row], rows),
            baseline="rows_adapter",
        ),
    ]
