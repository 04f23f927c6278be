"""Group 2: JSON encoders (json, orjson, ujson, msgspec) over the same 100 post dicts."""

import json
from collections.abc import Callable

import msgspec
import ujson

from commons.plain_json import (
    isoformat_default,
    native_orjson,
    orjson_with_default,
    posts_payload,
    stdlib_json,
)
from commons.probes.microbench.benchmark import Benchmark, verify_same_posts
from commons.synthetic import build_ladder_posts


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
    # The json-versus-orjson study's "without default": the dates already strings, so json
    # never calls back.
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
