"""In-process micro-benchmarks in one app's locked environment, timed in interleaved rounds;
`./test.sh micro` (loadtest/.../modes/micro/runner.py) runs several of these processes and
pairs their rounds.

Unlike the rest of commons it reaches Pydantic, through the app named by --app: it runs only in
an app's environment, never in the apps themselves."""

import argparse
import importlib
import inspect
import json
import marshal
import math
import pickle
import platform
import sys
import timeit
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn, cast

import msgspec
import orjson
import ujson

from commons.plain_json import (
    isoformat_default,
    native_orjson,
    orjson_with_default,
    posts_payload,
    stdlib_json,
)
from commons.probes.ladder_check import rung_differences
from commons.synthetic import build_ladder_posts

GROUPS = ("pydantic", "encoders", "container")
CONTAINER_RECORDS = 2_000  # study 002's container: about 500 bytes a record, 2,000 a blob
# timeit switches the garbage collector off; `setup` runs after that, before the clock starts.
# The Pydantic paths and the decoders allocate thousands of objects per call, and collecting
# them is part of what they cost in an app.
KEEP_GC_ENABLED = "gc.enable()"
VERSION_PACKAGES = ("pydantic", "pydantic-core", "fastapi", "orjson", "ujson", "msgspec")


class MicrobenchError(Exception):
    """A problem to report in one line, then exit non-zero."""


@dataclass(frozen=True)
class Benchmark:
    group: str
    name: str
    label: str
    call: Callable[[], object]
    # The benchmark of the same group that this one's per-round ratio is formed with.
    baseline: str
    details: dict[str, str] = field(default_factory=dict)  # the container's format, operation


# --- Group 1: the Pydantic paths over the ladder's 100 posts ------------------------------


def load_app_modules(package: str) -> tuple[ModuleType, ModuleType]:
    """The app's `serialization` (its PydanticCalls) and `schemas`, by package name."""
    try:
        serialization = importlib.import_module(f"{package}.serialization")
        schemas = importlib.import_module(f"{package}.schemas")
    except ImportError as error:
        raise MicrobenchError(f"cannot import the app {package!r}: {error}") from None
    if not hasattr(serialization, "CALLS") or not hasattr(schemas, "PostsOut"):
        raise MicrobenchError(f"{package!r} is no app of the lab (no serialization.CALLS)")
    return serialization, schemas


def pydantic_group(package: str) -> list[Benchmark]:
    serialization, schemas = load_app_modules(package)
    calls = serialization.CALLS
    posts = build_ladder_posts()
    validated = calls.validate(posts)
    fastapi_body = fastapi_response_model_body(schemas.PostsOut)

    def plain_json() -> bytes:
        return stdlib_json(posts_payload(posts))

    entries: list[tuple[str, str, Callable[[], object]]] = [
        ("validate", "validate only", lambda: calls.validate(posts)),
        ("serialise", "serialise only (validated model)", lambda: calls.dump_json(validated)),
        (
            "validate_serialise",
            "validate + serialise",
            lambda: calls.dump_json(calls.validate(posts)),
        ),
        (
            "construct_serialise",
            "construct + serialise",
            lambda: calls.dump_json(calls.construct(posts)),
        ),
        ("construct", "construct only (no validation)", lambda: calls.construct(posts)),
        (
            "fastapi_response_model",
            "FastAPI's response_model path",
            lambda: fastapi_body({"posts": posts}),
        ),
        ("plain_dicts", "plain function -> dicts", lambda: posts_payload(posts)),
        ("plain_json", "plain function + json, default", plain_json),
        ("plain_orjson", "plain function + orjson", lambda: native_orjson(posts_payload(posts))),
    ]
    benchmarks = [
        Benchmark("pydantic", name, label, call, baseline="plain_json")
        for name, label, call in entries
    ]
    json_outputs = {
        "serialise",
        "validate_serialise",
        "construct_serialise",
        "fastapi_response_model",
        "plain_orjson",
    }
    verify_same_posts(plain_json(), [b for b in benchmarks if b.name in json_outputs])
    return benchmarks


def fastapi_response_model_body(posts_out: type[Any]) -> Callable[[Any], bytes]:
    """What FastAPI's request handler does with a route's return value when the route declares
    `response_model=PostsOut`: validate and serialise it (fastapi.routing.serialize_response),
    then build the response and its body. Without the thread pool a `def` route adds: this is
    the Pydantic and FastAPI work alone. FastAPI 0.130+ (the v2-latest arm) serialises straight
    to JSON bytes in pydantic-core when the route has no custom response class, as here."""
    from fastapi.responses import JSONResponse, Response
    from fastapi.routing import APIRoute, serialize_response

    def endpoint() -> None:
        """Never called: the route only builds FastAPI's response field."""

    route = APIRoute("/posts", endpoint, response_model=posts_out)
    response_field = getattr(route, "secure_cloned_response_field", None) or route.response_field
    dumps_json = "dump_json" in inspect.signature(serialize_response).parameters

    def body(content: Any) -> bytes:
        options: dict[str, Any] = {"dump_json": True} if dumps_json else {}
        serialised = finish_coroutine(
            serialize_response(field=response_field, response_content=content, **options)
        )
        if dumps_json:
            return cast(bytes, Response(content=serialised, media_type="application/json").body)
        return cast(bytes, JSONResponse(serialised).body)

    return body


def finish_coroutine(coroutine: Any) -> Any:
    """Run a coroutine that never suspends (serialize_response with is_coroutine=True only
    awaits the thread pool, which it then skips) without the cost of an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as finished:
        return finished.value
    coroutine.close()
    raise MicrobenchError("serialize_response suspended; this FastAPI cannot be timed in-process")


# --- Group 2: JSON encoders over the same 100 post dicts ----------------------------------


def ujson_with_default(payload: object) -> bytes:
    """ujson has no datetime of its own (it raises TypeError), so the same Python default;
    encoded to bytes like every other encoder here."""
    return ujson.dumps(
        payload, default=isoformat_default, ensure_ascii=False, escape_forward_slashes=False
    ).encode("utf-8")


def stdlib_json_without_datetimes(payload: object) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def encoder_group() -> list[Benchmark]:
    payload = posts_payload(build_ladder_posts())
    # Study 003's "without default": the dates already strings, so json never calls back.
    prerendered = {
        "posts": [
            {
                **post,
                "published_at": post["published_at"].isoformat(),
                "updated_at": post["updated_at"].isoformat(),
            }
            for post in payload["posts"]
        ]
    }
    entries: list[tuple[str, str, Callable[[], object]]] = [
        ("json_default", "json, Python default", lambda: stdlib_json(payload)),
        (
            "json_prerendered",
            "json, datetimes already strings",
            lambda: stdlib_json_without_datetimes(prerendered),
        ),
        ("orjson_native", "orjson, native datetimes", lambda: native_orjson(payload)),
        ("orjson_default", "orjson, Python default", lambda: orjson_with_default(payload)),
        ("ujson_default", "ujson, Python default", lambda: ujson_with_default(payload)),
        ("msgspec_native", "msgspec, native datetimes", lambda: msgspec.json.encode(payload)),
    ]
    benchmarks = [
        Benchmark("encoders", name, label, call, baseline="json_default")
        for name, label, call in entries
    ]
    verify_same_posts(stdlib_json(payload), benchmarks)
    return benchmarks


def verify_same_posts(reference: bytes, benchmarks: Sequence[Benchmark]) -> None:
    """Every JSON path must answer the same posts (timestamps as instants) before it is timed:
    one that answered less would look faster for the wrong reason."""
    for benchmark in benchmarks:
        body = benchmark.call()
        if isinstance(body, str):
            body = body.encode("utf-8")
        if not isinstance(body, bytes):
            raise MicrobenchError(f"{benchmark.group}/{benchmark.name} gives no JSON")
        differences = rung_differences(reference, body)
        if differences:
            raise MicrobenchError(
                f"{benchmark.group}/{benchmark.name} does not answer the same posts as "
                f"{benchmark.baseline}: {'; '.join(differences)}"
            )


# --- Group 3: study 002's container of 2,000 records --------------------------------------


def build_container(records: int = CONTAINER_RECORDS) -> dict[str, dict[str, Any]]:
    """A hash list keyed by the record's name, as in study 002, of basic types only. String
    keys, so that JSON (whose keys are strings) gives back exactly what it was given."""
    first_names = ("Anna", "Bernd", "Clara", "Dieter", "Eva", "Frank", "Greta")
    streets = ("Hauptstrasse", "Bahnhofstrasse", "Gartenweg", "Schillerplatz", "Am Markt")
    return {
        f"record-{number:05d}": {
            "id": number,
            "first_name": first_names[number % len(first_names)],
            "last_name": f"Nachname {number}",
            "street": f"{streets[number % len(streets)]} {number % 97 + 1}",
            "postcode": 10_000 + number * 37 % 89_999,
            "balance": round(number * 1.37 % 1_000, 2) + 0.5,
            "active": number % 3 != 0,
            "note": None if number % 5 else "vip",
            "scores": [number % 7, number % 11, number % 13],
        }
        for number in range(1, records + 1)
    }


@dataclass(frozen=True)
class ContainerFormat:
    name: str
    label: str
    encode: Callable[[Any], bytes]
    decode: Callable[[bytes], Any]


CONTAINER_BASELINE = "pickle_highest"  # the study's starting point
CONTAINER_FORMATS = (
    ContainerFormat(
        "pickle_2",
        "pickle, protocol 2",
        lambda value: pickle.dumps(value, protocol=2),
        pickle.loads,
    ),
    ContainerFormat(
        "pickle_highest",
        f"pickle, protocol {pickle.HIGHEST_PROTOCOL} (highest)",
        lambda value: pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL),
        pickle.loads,
    ),
    ContainerFormat(
        "marshal", f"marshal (version {marshal.version})", marshal.dumps, marshal.loads
    ),
    ContainerFormat(
        "json",
        "stdlib json, compact, UTF-8",
        lambda value: json.dumps(value, separators=(",", ":")).encode("utf-8"),
        json.loads,
    ),
    ContainerFormat("orjson", "orjson", orjson.dumps, orjson.loads),
    ContainerFormat("msgspec_json", "msgspec JSON", msgspec.json.encode, msgspec.json.decode),
    ContainerFormat(
        "msgspec_msgpack", "msgspec MessagePack", msgspec.msgpack.encode, msgspec.msgpack.decode
    ),
)


def container_group() -> tuple[list[Benchmark], dict[str, Any]]:
    """Encode and decode per format, each against pickle's of the same round; and, measured
    once, each format's size raw and after zlib (default level), and whether it round-trips."""
    container = build_container()
    benchmarks = []
    facts: dict[str, Any] = {"records": len(container), "formats": {}}
    for form in CONTAINER_FORMATS:
        encoded = form.encode(container)
        roundtrip = roundtrip_difference(container, form.decode(encoded))
        if roundtrip is not None:
            raise MicrobenchError(f"container/{form.name} does not round-trip: {roundtrip}")
        facts["formats"][form.name] = {
            "label": form.label,
            "bytes": len(encoded),
            "zlib_bytes": len(zlib.compress(encoded)),
            "roundtrip": "identical (values and types)",
        }
        for operation, call in (
            ("encode", lambda form=form: form.encode(container)),
            ("decode", lambda form=form, encoded=encoded: form.decode(encoded)),
        ):
            benchmarks.append(
                Benchmark(
                    "container",
                    f"{form.name}.{operation}",
                    f"{form.label}: {operation}",
                    call,
                    baseline=f"{CONTAINER_BASELINE}.{operation}",
                    details={"format": form.name, "operation": operation},
                )
            )
    return benchmarks, facts


def roundtrip_difference(expected: Any, actual: Any, where: str = "container") -> str | None:
    """The first place where `actual` differs from `expected` in value or in type (1 == 1.0
    == True in Python, and a tuple can come back a list), or None."""
    if type(actual) is not type(expected):
        return f"{where} is a {type(actual).__name__}, was a {type(expected).__name__}"
    if isinstance(expected, dict):
        if list(actual) != list(expected):
            return f"{where} has other keys (or another key order)"
        for key, value in expected.items():
            difference = roundtrip_difference(value, actual[key], f"{where}[{key!r}]")
            if difference:
                return difference
        return None
    if isinstance(expected, list):
        if len(actual) != len(expected):
            return f"{where} has {len(actual)} items, had {len(expected)}"
        for index, (value, item) in enumerate(zip(expected, actual, strict=True)):
            difference = roundtrip_difference(value, item, f"{where}[{index}]")
            if difference:
                return difference
        return None
    return None if actual == expected else f"{where} is {actual!r}, was {expected!r}"


# --- Timing --------------------------------------------------------------------------------


def autorange(timer: timeit.Timer, target_s: float) -> tuple[int, float]:
    """timeit's autorange (1, 2, 5, 10, 20, ... loops until one run lasts target_s), with a
    target of our own: Timer.autorange always aims at 0.2 s."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            number = step * scale
            elapsed = timer.timeit(number)
            if elapsed >= target_s:
                return number, elapsed
        scale *= 10


def calibrate(timer: timeit.Timer, min_time_s: float) -> int:
    """Loops per measurement so that one lasts about min_time_s: autorange to a fifth of it
    (which warms the call up too), then scaled; timeit's own 1-2-5 steps would overshoot by up
    to 2.5 times and make each round, and so each pair, longer."""
    number, _ = autorange(timer, min_time_s / 5)
    # The fastest of three: one slow run (a full garbage collection, the machine) would make
    # too few loops, and a measurement shorter than asked.
    fastest = min(timer.repeat(repeat=3, number=number))
    return max(1, math.ceil(number * min_time_s / fastest))


def rotated(items: Sequence[Benchmark], shift: int) -> list[Benchmark]:
    shift %= len(items)
    return [*items[shift:], *items[:shift]]


def time_group(
    benchmarks: Sequence[Benchmark], *, rounds: int, min_time_s: float, process: int
) -> list[dict[str, Any]]:
    """Calibrate every benchmark of the group, then time the rounds: per round each benchmark
    once, starting one place further on each round (and each process), so no benchmark always
    follows the same neighbour. The machine drifts by ±30% within seconds, so a benchmark is
    only ever compared with its baseline from the same round."""
    timers = {b.name: timeit.Timer(b.call, setup=KEEP_GC_ENABLED) for b in benchmarks}
    loops = {name: calibrate(timer, min_time_s) for name, timer in timers.items()}
    samples: dict[str, list[dict[str, float]]] = {b.name: [] for b in benchmarks}
    for round_number in range(rounds):
        for benchmark in rotated(benchmarks, round_number + process):
            number = loops[benchmark.name]
            elapsed = timers[benchmark.name].timeit(number)
            samples[benchmark.name].append(
                {"round": round_number, "seconds_per_call": elapsed / number}
            )
    return [
        {
            "group": b.group,
            "name": b.name,
            "label": b.label,
            "baseline": b.baseline,
            **b.details,
            "loops_per_measurement": loops[b.name],
            "samples": samples[b.name],
        }
        for b in benchmarks
    ]


# --- The command line ----------------------------------------------------------------------


def environment_versions() -> dict[str, str | bool | None]:
    versions: dict[str, str | bool | None] = {"python": platform.python_version()}
    for package in VERSION_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def run(arguments: argparse.Namespace) -> dict[str, Any]:
    groups = list(dict.fromkeys(arguments.groups))  # each group once, in the order given
    results: dict[str, Any] = {
        "app": arguments.app,
        "process": arguments.process,
        "versions": environment_versions(),
        "settings": {
            "groups": groups,
            "rounds": arguments.rounds,
            "min_time_s": arguments.min_time,
            "gc_enabled_during_timing": True,
        },
        "benchmarks": [],
    }
    for group in groups:
        if group == "pydantic":
            benchmarks = pydantic_group(arguments.app)
        elif group == "encoders":
            benchmarks = encoder_group()
        else:
            benchmarks, results["container"] = container_group()
        print(f"{arguments.app} process {arguments.process}: timing {group}", file=sys.stderr)
        results["benchmarks"] += time_group(
            benchmarks,
            rounds=arguments.rounds,
            min_time_s=arguments.min_time,
            process=arguments.process,
        )
    return results


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line (no usage block), like the runner's errors."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(text)
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m commons.probes.microbench", description=__doc__)
    parser.add_argument("--app", required=True, help="the app package: app_v1 or app_v2")
    parser.add_argument("--groups", nargs="+", choices=GROUPS, default=list(GROUPS))
    parser.add_argument("--rounds", type=positive_int, default=5, help="rounds per group")
    parser.add_argument(
        "--min-time", type=positive_float, default=0.05, help="seconds per measurement"
    )
    parser.add_argument(
        "--process", type=int, default=0, help="this process's number (rotates the order)"
    )
    parser.add_argument("--output", type=Path, required=True, help="where the raw JSON goes")
    return parser


def main(argv: list[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    try:
        results = run(arguments)
    except MicrobenchError as error:
        print(f"microbench: error: {error}", file=sys.stderr)
        return 1
    try:
        arguments.output.write_text(json.dumps(results, indent=1) + "\n")
    except OSError as error:
        print(f"microbench: error: cannot write {arguments.output}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
