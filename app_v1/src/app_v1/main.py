"""The app on Pydantic 1: `uvicorn app_v1.main:app` (needs DATABASE_URL)."""

import pydantic.v1

from app_v1 import payload_schemas, related_schemas, schemas, serialization
from commons.application import build_app
from commons.routes import SchemaSet

# The Pydantic 1 this code runs on (schemas.py): 1.10's wheels are Cython-compiled where
# available; Pydantic 2's pydantic.v1 is pure Python, several times slower.
PYDANTIC_COMPILED = bool(getattr(pydantic.v1, "compiled", False))
PYDANTIC_V1_VERSION = pydantic.v1.VERSION

app = build_app(
    title="Pydantic v1 lab",
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
    pydantic_version=pydantic.VERSION,  # the installed distribution: 1.10 or 2 (v1-shim)
    pydantic_v1_version=PYDANTIC_V1_VERSION,
    pydantic_compiled=PYDANTIC_COMPILED,
)
