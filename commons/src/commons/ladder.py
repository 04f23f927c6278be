"""The serialisation ladder: the same 100 in-memory posts answered by eight paths, from
FastAPI's response_model down to bytes encoded once. `./test.sh ladder` times every rung in both
apps; each rung's step up from the one before shows what a cheaper way to answer is worth, and
what it gives up (validation, Pydantic's datetime rendering, fresh is_published).

Every rung answers JSON that parses to the same posts as `response_model` (timestamps as
instants): the harness checks it before timing (verify_ladder in
loadtest/src/loadtest/modes/ladder/verify.py).

Every route is a `def`, so FastAPI runs each in its thread pool. The two response_model rungs
also validate the return value there (FastAPI's serialize_response, one more hop); the others
return a Response, which FastAPI sends as it is: part of what leaving response_model saves.
"""

from collections.abc import Callable
from typing import Any, cast

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from commons.plain_json import native_orjson, orjson_with_default, posts_payload, stdlib_json
from commons.routes import SchemaSet
from commons.synthetic import build_ladder_posts

LADDER_PREFIX = "/ladder"
# Rung name -> what it does; the order is the ladder's, from most help to least.
RUNGS = {
    "response_model": "attribute objects; FastAPI validates and serialises (READ synthetic's "
    "path, over posts built once)",
    "validated_twice": "the model built in the route and declared as response_model too "
    "(Pydantic 1 validates it again; FastAPI on Pydantic 2 passes the instance through)",
    "pydantic_json": "the model built in the route, serialised by Pydantic into a Response",
    "construct": "the model built without validation, serialised by Pydantic",
    "plain_json": "a plain function -> dicts -> json.dumps with a Python datetime default",
    "plain_orjson": "a plain function -> dicts -> orjson, datetimes native",
    "plain_orjson_default": "a plain function -> dicts -> orjson with the Python default",
    "floor": "the same posts, encoded once at start-up (plain_orjson's bytes)",
}
RUNG_NAMES = tuple(RUNGS)
BASE_RUNG = "response_model"


class JSONBytes(JSONResponse):
    """A body already encoded as JSON, sent as it is. A JSONResponse to FastAPI, so OpenAPI
    documents the 200 as the PostsOut it declares (not also as a plain string)."""

    def render(self, content: Any) -> bytes:
        return cast(bytes, Response.render(self, content))  # bytes in, the same bytes out


def build_ladder_router(schemas: SchemaSet) -> APIRouter:
    # As in routes.py: annotations are evaluated here, on this app's own classes.
    PostsOut = schemas.posts_out
    calls = schemas.calls
    posts = build_ladder_posts()
    floor_body = native_orjson(posts_payload(posts))
    # The routes that build their own body still document PostsOut as their 200.
    documented: dict[int | str, dict[str, Any]] = {200: {"model": PostsOut}}
    router = APIRouter(prefix=LADDER_PREFIX, tags=["ladder"])

    @router.get("/response_model", response_model=PostsOut, description=RUNGS["response_model"])
    def response_model() -> Any:
        return {"posts": posts}

    @router.get("/validated_twice", response_model=PostsOut, description=RUNGS["validated_twice"])
    def validated_twice() -> Any:
        return calls.validate(posts)

    # The rungs that build their own body: the route is only `return JSONBytes(body())`.
    bodies: dict[str, Callable[[], bytes | str]] = {
        "pydantic_json": lambda: calls.dump_json(calls.validate(posts)),
        "construct": lambda: calls.dump_json(calls.construct(posts)),
        "plain_json": lambda: stdlib_json(posts_payload(posts)),
        "plain_orjson": lambda: native_orjson(posts_payload(posts)),
        "plain_orjson_default": lambda: orjson_with_default(posts_payload(posts)),
        "floor": lambda: floor_body,
    }
    for rung, body in bodies.items():
        router.add_api_route(
            f"/{rung}",
            answer_with(body),
            methods=["GET"],
            name=rung,
            response_class=JSONBytes,
            responses=documented,
            description=RUNGS[rung],
        )
    return router


def answer_with(body: Callable[[], bytes | str]) -> Callable[[], JSONBytes]:
    def answer() -> JSONBytes:  # `def`, like every rung: FastAPI runs it in its thread pool
        return JSONBytes(body())

    return answer
