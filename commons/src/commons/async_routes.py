"""`async def` routes on an AsyncSession (`--scenarios async-read,async-synthetic,async-write`,
and the latency mode's `async-mixed`): the other way FastAPI services are written, beside the
`def` routes they twin, answering the same JSON. In an `async def` route FastAPI validates and
serialises the answer on the event loop (a `def` route validates in the thread pool), so the
schema layer's cost is a larger share of the request, and a large answer holds every other
request while it is built.

There is no lazy related route: in async code a lazy load raises MissingGreenlet
(tests/crud/test_async_crud.py shows it); the eager one sets raiseload("*") so nothing loads
lazily by accident."""

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, status

from commons import async_crud
from commons.async_database import AsyncSessionDep
from commons.related_routes import DEFAULT_RELATED_PER_PAGE, RelatedPerPage
from commons.routes import (
    DATABASE_DOWN,
    DEFAULT_PER_PAGE,
    DEFAULT_SYNTHETIC_PER_PAGE,
    NOT_FOUND,
    TOO_LARGE,
    AsciiIntegersRoute,
    Page,
    PerPage,
    PostId,
    SchemaSet,
)
from commons.synthetic import build_synthetic_posts

ASYNC_PREFIX = "/async"


def build_async_router(schemas: SchemaSet) -> APIRouter:
    # As in routes.py: annotations are evaluated here, on this app's own classes.
    PostIn = schemas.post_in
    PostOut = schemas.post_out
    PostsOut = schemas.posts_out
    RelatedPostsOut = schemas.related_posts_out
    Order = schemas.order
    ascending = Order("asc")

    router = APIRouter(prefix=ASYNC_PREFIX, tags=["async"], route_class=AsciiIntegersRoute)

    @router.get("/posts", response_model=PostsOut, responses=DATABASE_DOWN)
    async def list_posts_async(
        session: AsyncSessionDep,
        per_page: PerPage = DEFAULT_PER_PAGE,
        page: Page = 0,
        order: Annotated[Order, Query(description="By published_at, then id.")] = ascending,  # type: ignore[valid-type]
    ) -> Any:
        """List visible posts, ordered by publication time: GET /posts, `async def`."""
        posts = await async_crud.list_posts(
            session=session,
            limit=per_page,
            offset=page * per_page,
            newest_first=order.value == "desc",  # type: ignore[attr-defined]
        )
        return {"posts": posts}

    @router.get("/posts_synthetic", response_model=PostsOut)
    async def list_synthetic_posts_async(
        per_page: PerPage = DEFAULT_SYNTHETIC_PER_PAGE,
    ) -> Any:
        """List posts built in memory on each request: GET /posts_synthetic, `async def`."""
        return {"posts": build_synthetic_posts(per_page)}

    @router.get("/posts/{post_id}", response_model=PostOut, responses=NOT_FOUND | DATABASE_DOWN)
    async def read_post_async(session: AsyncSessionDep, post_id: PostId) -> Any:
        """Read one post: GET /posts/{post_id}, `async def`."""
        post = await async_crud.get_post(session=session, post_id=post_id)
        if post is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "Post not found")
        return post

    @router.post(
        "/posts",
        response_model=PostOut,
        status_code=status.HTTP_201_CREATED,
        responses=TOO_LARGE | DATABASE_DOWN,
    )
    async def create_post_async(session: AsyncSessionDep, post_in: PostIn) -> Any:  # type: ignore[valid-type]
        """Create a post: POST /posts, `async def`."""
        return await async_crud.create_post(session=session, post_in=post_in)

    @router.get("/posts_related/eager", response_model=RelatedPostsOut, responses=DATABASE_DOWN)
    async def list_posts_eager_async(
        session: AsyncSessionDep,
        per_page: RelatedPerPage = DEFAULT_RELATED_PER_PAGE,
        page: Page = 0,
    ) -> Any:
        """List visible posts with their comments and tags, loaded with the page:
        GET /posts_related/eager, `async def` (nothing else may load: raiseload)."""
        posts = await async_crud.list_posts(
            session=session, limit=per_page, offset=page * per_page, with_related=True
        )
        return {"posts": posts}

    return router
