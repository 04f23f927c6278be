"""The app on Pydantic 1: `uvicorn app_v1.main:app` (needs DATABASE_URL)."""

import pydantic

from app_v1 import schemas, serialization
from commons.application import build_app
from commons.routes import SchemaSet

# 1.10 wheels are Cython-compiled where available; pure Python is several times slower.
PYDANTIC_COMPILED = bool(getattr(pydantic, "compiled", False))

app = build_app(
    title="Pydantic v1 lab",
    schemas=SchemaSet(
        post_in=schemas.PostIn,
        post_out=schemas.PostOut,
        posts_out=schemas.PostsOut,
        order=schemas.Order,
        calls=serialization.CALLS,
    ),
    pydantic_version=pydantic.VERSION,
    pydantic_compiled=PYDANTIC_COMPILED,
)
