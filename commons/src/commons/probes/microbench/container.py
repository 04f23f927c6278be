"""Group 3: the App Engine pickle-versus-marshal study's container of 2,000 records, encoded and
decoded in each format against pickle, with each format's size (raw and after zlib) and whether
it round-trips."""

import json
import marshal
import pickle
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

from commons.probes.microbench.benchmark import Benchmark, MicrobenchError

CONTAINER_RECORDS = 2_000  # the App Engine study's: about 500 bytes a record, 2,000 a blob


def build_container(records: int = CONTAINER_RECORDS) -> dict[str, dict[str, Any]]:
    """A hash list keyed by the record's name, as in the App Engine study, of basic types only.
    String keys, so that JSON (whose keys are strings) gives back exactly what it was given."""
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
