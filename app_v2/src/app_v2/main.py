"""The app on Pydantic 2: `uvicorn app_v2.main:app` (needs DATABASE_URL)."""

import pydantic

from app_v2 import payload_schemas, related_schemas, schemas, serialization
from commons.application import build_app
from commons.routes import SchemaSet

# Pydantic 2 always validates in pydantic-core, a compiled Rust extension.
PYDANTIC_COMPILED = True

app = build_app(
    title="Pydantic v2 lab",
    schemas=SchemaSet(
        post_in=schemas.PostIn,
        post_out=schemas.PostOut,
        posts_out=schemas.PostsOut,
        order=schemas.Order,
        calls=serialization.CALLS,
        posts_in=payload_schemas.PostsIn,
        post_ids=payload_schemas.PostIds,
        validated_posts=payload_schemas.ValidatedPosts,
        nested_posts_out=payload_schemas.NestedPostsOut,
        related_posts_out=related_schemas.RelatedPostsOut,
    ),
    pydantic_version=pydantic.VERSION,
    pydantic_compiled=PYDANTIC_COMPILED,
)
