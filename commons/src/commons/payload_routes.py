"""The payload sweep's routes (`./test.sh sweep`): answers of any size, flat or nested, and a
bulk body validated but not stored. None uses the database. POST /posts_bulk, which stores the
same body, is a posts route (routes.py).

Every route is a `def`, like the posts routes: FastAPI runs it in its thread pool and
validates the answer against its response_model there (orm_mode / from_attributes)."""

from typing import Annotated, Any

from fastapi import APIRouter, Query

from commons.payloads import (
    DEFAULT_COMMENTS_PER_POST,
    DEFAULT_PAYLOAD_ITEMS,
    MAX_BULK_POSTS,
    MAX_COMMENTS_PER_POST,
    MAX_PAYLOAD_ITEMS,
    flat_posts,
    nested_posts,
)
from commons.routes import TOO_LARGE, AsciiIntegersRoute, SchemaSet

PAYLOADS_PREFIX = "/payloads"

Items = Annotated[
    int, Query(ge=1, le=MAX_PAYLOAD_ITEMS, description="Posts in the answer (the first N).")
]
Comments = Annotated[int, Query(ge=0, le=MAX_COMMENTS_PER_POST, description="Comments per post.")]


def build_payload_router(schemas: SchemaSet) -> APIRouter:
    # As in routes.py: annotations are evaluated here, on this app's own classes.
    PostsOut = schemas.posts_out
    NestedPostsOut = schemas.nested_posts_out
    PostsIn = schemas.posts_in
    ValidatedPosts = schemas.validated_posts

    # AsciiIntegersRoute refuses `items` and `comments` spelt in other digits (routes.py).
    router = APIRouter(prefix=PAYLOADS_PREFIX, tags=["payloads"], route_class=AsciiIntegersRoute)

    @router.get("/flat", response_model=PostsOut)
    def flat(items: Items = DEFAULT_PAYLOAD_ITEMS) -> Any:
        """List posts built in memory once, with fixed moments (no database)."""
        return {"posts": flat_posts()[:items]}

    @router.get("/nested", response_model=NestedPostsOut)
    def nested(
        items: Items = DEFAULT_PAYLOAD_ITEMS, comments: Comments = DEFAULT_COMMENTS_PER_POST
    ) -> Any:
        """List posts built in memory once, each with its author and its comments (no
        database)."""
        return {"posts": nested_posts(comments)[:items]}

    @router.post(
        "/validate",
        response_model=ValidatedPosts,
        responses=TOO_LARGE,
        summary="Validate posts in bulk",
        description=f"Validate 1 to {MAX_BULK_POSTS} posts as POST /posts_bulk does, and answer "
        "how many: nothing is stored.",
    )
    def validate(posts_in: PostsIn) -> Any:  # type: ignore[valid-type]
        return {"count": len(posts_in.posts)}  # type: ignore[attr-defined]

    return router
