"""Builds a FastAPI app from a schema set: settings, database, routes and error handlers."""

import sys

import fastapi
from fastapi import FastAPI
from fastapi_offline import FastAPIOffline
from sqlalchemy import Engine

from commons.async_database import create_async_database_engine, create_async_session_factory
from commons.async_routes import ASYNC_PREFIX, build_async_router
from commons.config import ConfigurationError, Settings, load_settings
from commons.database import (
    DatabaseUnavailableError,
    create_database_engine,
    create_schema,
    create_session_factory,
)
from commons.hardening.body_limit import BodySizeLimit
from commons.hardening.database_deadline import DatabaseSlots, DatabaseSlotsMiddleware
from commons.hardening.error_handlers import add_error_handlers
from commons.hardening.payload_rows import PayloadRows, PayloadRowsMiddleware
from commons.health import build_health_router, collect_versions
from commons.ladder import build_ladder_router
from commons.payload_routes import build_payload_router
from commons.related_routes import build_related_router
from commons.related_rows import RELATED_PREFIX
from commons.routes import SchemaSet, build_posts_router
from commons.statement_count import build_statements_router, count_statements


def build_app(
    *,
    title: str,
    schemas: SchemaSet,
    pydantic_version: str,
    pydantic_compiled: bool,
    pydantic_v1_version: str | None = None,
) -> FastAPI:
    settings, engine = open_database(title)
    # /docs and /redoc from assets in the installed wheel, not a CDN: they work offline. Their
    # title names the FastAPI too: v2 and v2-latest serve the same code on different releases.
    # And an app on another Pydantic's pydantic.v1 (v1-shim) says so too: v1 runs its code.
    compiled = "compiled" if pydantic_compiled else "pure Python"
    shimmed = pydantic_v1_version is not None and pydantic_v1_version != pydantic_version
    runs_on = f"Pydantic {pydantic_version}'s pydantic.v1 and " if shimmed else ""
    pydantic_text = (
        f"Pydantic {pydantic_version}'s pydantic.v1 ({pydantic_v1_version}, {compiled})"
        if shimmed
        else f"Pydantic {pydantic_version} ({compiled})"
    )
    app = FastAPIOffline(
        title=f"{title} on {runs_on}FastAPI {fastapi.__version__}",
        version=pydantic_version,
        description=f"The lab's CRUD app on {pydantic_text} and FastAPI {fastapi.__version__}.",
    )
    app.state.engine = engine
    app.state.session_factory = create_session_factory(engine)
    async_engine = create_async_database_engine(settings)
    app.state.async_session_factory = create_async_session_factory(async_engine)
    app.state.statement_count = count_statements(engine, async_engine.sync_engine)
    app.include_router(build_posts_router(schemas))
    app.include_router(build_related_router(schemas))
    app.include_router(build_async_router(schemas))
    app.include_router(build_ladder_router(schemas))
    app.include_router(build_payload_router(schemas))
    versions = collect_versions(pydantic_version, pydantic_compiled, pydantic_v1_version)
    app.include_router(build_health_router(versions))
    app.include_router(build_statements_router())
    # Added first, so it runs inside BodySizeLimit: bodies it buffers are already bounded.
    app.add_middleware(
        DatabaseSlotsMiddleware,
        slots=DatabaseSlots(database_slot_count(settings), settings.database_timeout_s),
        uses_database=uses_database,
    )
    app.add_middleware(BodySizeLimit, max_body_bytes=settings.max_body_bytes)
    app.add_middleware(
        PayloadRowsMiddleware,
        rows=PayloadRows(settings.max_payload_rows, settings.payload_wait_s),
        building=PayloadRows(settings.max_building_rows, settings.payload_wait_s),
    )
    add_error_handlers(app)
    return app


def open_database(title: str) -> tuple[Settings, Engine]:
    """The settings and a database with its schema, or exit at once with one line (not a
    traceback) when a setting is malformed or the database is missing or unreachable."""
    try:
        settings = load_settings()
        engine = create_database_engine(settings)
        create_schema(engine)
    except (ConfigurationError, DatabaseUnavailableError) as error:
        # Exits 1 before uvicorn starts serving; the message never holds a piece of a password
        # (commons/config.py).
        print(f"{title}: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    return settings, engine


def uses_database(path: str) -> bool:
    """Whether a request path reaches a route that uses the database: those take a database
    slot (commons/hardening/database_deadline.py); /posts_synthetic, /docs and the rest never
    wait for one. tests/api/test_frozen_database.py checks it against the routes that document a
    503."""
    return path in ("/posts", "/posts_bulk", "/health", f"{ASYNC_PREFIX}/posts") or path.startswith(
        (
            "/posts/",
            f"{RELATED_PREFIX}/",
            f"{ASYNC_PREFIX}/posts/",
            f"{ASYNC_PREFIX}{RELATED_PREFIX}/",
        )
    )


def database_slot_count(settings: Settings) -> int | None:
    """One slot per connection the pool may open; None (no limit) for an unbounded pool."""
    if settings.pool_size == 0:  # SQLAlchemy's QueuePool: 0 means no limit
        return None
    return settings.pool_size + settings.max_overflow
