"""The related rows' routes (`--scenarios read-eager,read-lazy`): a page of posts with their
comments (one-to-many) and tags (many-to-many), as real services answer, loaded two ways:

- eager: one SELECT for the page and one per relationship (selectinload), 3 statements;
- lazy: the default loader. The answer's validation (orm_mode / from_attributes) reads
  post.comments and post.tags, and each read fires a SELECT: 1 + 2 per post, 41 for 20 posts.

Both are `def` routes on the request's session, like the posts routes: FastAPI validates the
answer in its thread pool, while the session is still open. Each post's comments and tags come
with the dataset (commons/related_rows.py); GET /statements counts what a request sent."""

from typing import Annotated, Any

from fastapi import APIRouter, Query

from commons import crud
from commons.database import SessionDep
from commons.related_rows import RELATED_PREFIX
from commons.routes import DATABASE_DOWN, AsciiIntegersRoute, Page, SchemaSet

DEFAULT_RELATED_PER_PAGE = 20
# A lazy page of 100 posts sends 201 statements; a larger one would hold a database slot for
# longer than any route should.
MAX_RELATED_PER_PAGE = 100

RelatedPerPage = Annotated[
    int, Query(ge=1, le=MAX_RELATED_PER_PAGE, description="Posts per page, with their rows.")
]


def build_related_router(schemas: SchemaSet) -> APIRouter:
    # As in routes.py: annotations are evaluated here, on this app's own classes.
    RelatedPostsOut = schemas.related_posts_out

    router = APIRouter(prefix=RELATED_PREFIX, tags=["related rows"], route_class=AsciiIntegersRoute)

    @router.get("/eager", response_model=RelatedPostsOut, responses=DATABASE_DOWN)
    def list_posts_eager(
        session: SessionDep, per_page: RelatedPerPage = DEFAULT_RELATED_PER_PAGE, page: Page = 0
    ) -> Any:
        """List visible posts with their comments and tags, loaded with the page: 3 SQL
        statements whatever its size (selectinload)."""
        posts = crud.list_posts(
            session=session, limit=per_page, offset=page * per_page, with_related=True
        )
        return {"posts": posts}

    @router.get("/lazy", response_model=RelatedPostsOut, responses=DATABASE_DOWN)
    def list_posts_lazy(
        session: SessionDep, per_page: RelatedPerPage = DEFAULT_RELATED_PER_PAGE, page: Page = 0
    ) -> Any:
        """List visible posts with their comments and tags, loaded as the answer reads them:
        1 SQL statement for the page, then 2 per post (the N+1 queries of a lazy loader)."""
        posts = crud.list_posts(session=session, limit=per_page, offset=page * per_page)
        return {"posts": posts}

    return router
