"""The HTTP API, built from a schema set so both apps serve identical paths and status codes."""

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request, Response, status
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

from commons import crud
from commons.database import SessionDep
from commons.payloads import MAX_BULK_POSTS
from commons.synthetic import build_synthetic_posts

DEFAULT_PER_PAGE = 10
DEFAULT_SYNTHETIC_PER_PAGE = 100  # the reference experiment's synthetic list size
MAX_PER_PAGE = 1000
# Keeps page * per_page (the SQL OFFSET) far inside PostgreSQL's bigint range.
MAX_PAGE = 1_000_000

PerPage = Annotated[int, Query(ge=1, le=MAX_PER_PAGE, description="Posts per page.")]
PostId = Annotated[int, Path(description="The post's id.")]
Page = Annotated[int, Query(ge=0, le=MAX_PAGE, description="Zero-based page.")]
# The integer parameters, which every arm reads from ASCII digits only (AsciiIntegersRoute).
INTEGER_PARAMETERS = (
    ("path", "post_id"),
    ("query", "per_page"),
    ("query", "page"),
    ("query", "items"),  # payload_routes.py
    ("query", "comments"),
)
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "Post not found"}}
# Every route that uses the database (commons/hardening/database_deadline.py).
DATABASE_DOWN: dict[int | str, dict[str, Any]] = {
    503: {
        "description": "The database did not answer within DATABASE_TIMEOUT_SECONDS "
        "(5 s unless configured)"
    }
}
# Bodies are refused before they are read whole (commons/hardening/body_limit.py).
TOO_LARGE: dict[int | str, dict[str, Any]] = {
    413: {"description": "Request body over MAX_BODY_BYTES (1 MiB unless configured)"}
}


@dataclass(frozen=True)
class PydanticCalls:
    """The calls the serialisation ladder (commons/ladder.py) makes, spelled by each major."""

    validate: Callable[[list[Any]], Any]  # attribute objects -> PostsOut, validated
    construct: Callable[[list[Any]], Any]  # attribute objects -> PostsOut, not validated
    dump_json: Callable[[Any], str]  # PostsOut -> compact JSON, by Pydantic


@dataclass(frozen=True)
class SchemaSet:
    """The Pydantic classes of one app; the only thing that differs between v1 and v2."""

    post_in: type[Any]
    post_out: type[Any]
    posts_out: type[Any]
    order: type[Enum]
    calls: PydanticCalls
    # The payload sweep's (commons/payload_routes.py, POST /posts_bulk below).
    posts_in: type[Any]  # {"posts": [PostIn, ...]}, 1 to MAX_BULK_POSTS
    post_ids: type[Any]  # {"ids": [...]}
    validated_posts: type[Any]  # {"count": n}
    nested_posts_out: type[Any]  # {"posts": [a post with its author and comments]}
    # The related rows' (commons/related_routes.py): posts with their comments and tags.
    related_posts_out: type[Any]


class AsciiIntegersRoute(APIRoute):
    """Refuses an integer parameter written with anything but ASCII (a 422 in every arm).

    Pydantic 1 reads integers with Python's int(), which takes any Unicode decimal digit and
    space: /posts/%D9%A1 (Arabic-Indic one) deleted post 1, and ?per_page=１０ (full-width) was 10.
    Pydantic 2 reads ASCII digits only. A request whose path and query string are plain ASCII
    (every ordinary one) pays three string tests."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def handle_ascii_integers(request: Request) -> Response:
            query = request.scope["query_string"]
            if not request.scope["path"].isascii() or b"%" in query or not query.isascii():
                refuse_non_ascii_integers(request)
            return await handle(request)

        return handle_ascii_integers


def refuse_non_ascii_integers(request: Request) -> None:
    errors = []
    for location, name in INTEGER_PARAMETERS:
        if location == "path":
            values = [request.path_params.get(name, "")]
        else:
            values = request.query_params.getlist(name)
        errors += [
            {
                "loc": (location, name),
                "msg": "must be an integer written in ASCII digits (0-9)",
                "type": "non_ascii_integer",
            }
            for value in values
            if not value.isascii()
        ]
    if errors:
        raise RequestValidationError(errors)


def build_posts_router(schemas: SchemaSet) -> APIRouter:
    # Annotations below are evaluated right here, on this app's own classes: keep this module
    # free of `from __future__ import annotations`, or FastAPI could not resolve them.
    PostIn = schemas.post_in
    PostOut = schemas.post_out
    PostsOut = schemas.posts_out
    PostsIn = schemas.posts_in
    PostIds = schemas.post_ids
    Order = schemas.order
    ascending = Order("asc")

    router = APIRouter(tags=["posts"], route_class=AsciiIntegersRoute)

    def get_visible_post(session: SessionDep, post_id: int) -> Any:
        post = crud.get_post(session=session, post_id=post_id)
        if post is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "Post not found")
        return post

    # Routes return ORM objects: FastAPI validates them once against response_model
    # (orm_mode / from_attributes) and serialises the result; no model is built twice.
    @router.get("/posts", response_model=PostsOut, responses=DATABASE_DOWN)
    def list_posts(
        session: SessionDep,
        per_page: PerPage = DEFAULT_PER_PAGE,
        page: Page = 0,
        # Order and PostIn are the app's own (its schema set): types chosen at run time.
        order: Annotated[Order, Query(description="By published_at, then id.")] = ascending,  # type: ignore[valid-type]
    ) -> Any:
        """List visible posts, ordered by publication time."""
        posts = crud.list_posts(
            session=session,
            limit=per_page,
            offset=page * per_page,
            newest_first=order.value == "desc",  # type: ignore[attr-defined]
        )
        return {"posts": posts}

    @router.get("/posts_synthetic", response_model=PostsOut)
    def list_synthetic_posts(per_page: PerPage = DEFAULT_SYNTHETIC_PER_PAGE) -> Any:
        """List posts built in memory on each request (no database)."""
        return {"posts": build_synthetic_posts(per_page)}

    @router.get("/posts/{post_id}", response_model=PostOut, responses=NOT_FOUND | DATABASE_DOWN)
    def read_post(session: SessionDep, post_id: PostId) -> Any:
        """Read one post."""
        return get_visible_post(session, post_id)

    @router.post(
        "/posts",
        response_model=PostOut,
        status_code=status.HTTP_201_CREATED,
        responses=TOO_LARGE | DATABASE_DOWN,
    )
    def create_post(session: SessionDep, post_in: PostIn) -> Any:  # type: ignore[valid-type]
        """Create a post."""
        return crud.create_post(session=session, post_in=post_in)

    @router.post(
        "/posts_bulk",
        response_model=PostIds,
        status_code=status.HTTP_201_CREATED,
        responses=TOO_LARGE | DATABASE_DOWN,
        summary="Create posts in bulk",
        description=f"Create 1 to {MAX_BULK_POSTS} posts in one transaction: all of them or "
        "none. Answers their ids, in the order sent.",
    )
    def create_posts(session: SessionDep, posts_in: PostsIn) -> Any:  # type: ignore[valid-type]
        return {"ids": crud.create_posts(session=session, posts_in=posts_in.posts)}  # type: ignore[attr-defined]

    @router.put(
        "/posts/{post_id}", response_model=PostOut, responses=NOT_FOUND | TOO_LARGE | DATABASE_DOWN
    )
    def update_post(session: SessionDep, post_id: PostId, post_in: PostIn) -> Any:  # type: ignore[valid-type]
        """Replace a post's title, content and publication time."""
        post = crud.update_post(session=session, post_id=post_id, post_in=post_in)
        if post is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "Post not found")
        return post

    @router.delete(
        "/posts/{post_id}",
        status_code=status.HTTP_204_NO_CONTENT,
        response_class=Response,
        responses=NOT_FOUND | DATABASE_DOWN,
    )
    def delete_post(session: SessionDep, post_id: PostId) -> Response:
        """Delete a post (soft delete: it disappears from every read)."""
        if not crud.delete_post(session=session, post_id=post_id):
            raise HTTPException(status.HTTP_404_NOT_FOUND, "Post not found")
        return Response(status_code=status.HTTP_204_NO_CONTENT)

    return router
