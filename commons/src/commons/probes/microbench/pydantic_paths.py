"""Group 1: the Pydantic paths over the ladder's 100 posts (validate, serialise, construct,
FastAPI's response_model path), next to a plain function with json and with orjson."""

import importlib
import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any, cast

from commons.plain_json import native_orjson, posts_payload, stdlib_json
from commons.probes.microbench.benchmark import Benchmark, MicrobenchError, verify_same_posts
from commons.synthetic import build_ladder_posts


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
