"""Builds a FastAPI app from a schema set: settings, database, routes and error handlers."""

import json
import sys

from fastapi import FastAPI, Request, status
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from commons.body_limit import BodySizeLimit
from commons.config import ConfigurationError, load_settings
from commons.database import (
    DatabaseUnavailableError,
    create_database_engine,
    create_schema,
    create_session_factory,
)
from commons.error_bodies import bounded_errors
from commons.health import build_health_router, collect_versions
from commons.routes import SchemaSet, build_posts_router


def build_app(
    *, title: str, schemas: SchemaSet, pydantic_version: str, pydantic_compiled: bool
) -> FastAPI:
    """Fail fast with one line (not a traceback) when the database is missing or unreachable."""
    try:
        settings = load_settings()
        engine = create_database_engine(settings)
        create_schema(engine)
    except (ConfigurationError, DatabaseUnavailableError) as error:
        # SystemExit prints its message to stderr and exits 1, before uvicorn starts serving.
        print(f"{title}: {error}", file=sys.stderr)
        raise SystemExit(1) from None

    # /docs and /redoc from assets in the installed wheel, not a CDN: they work offline.
    app = FastAPIOffline(title=title, version=pydantic_version)
    app.state.engine = engine
    app.state.session_factory = create_session_factory(engine)
    app.include_router(build_posts_router(schemas))
    app.include_router(build_health_router(collect_versions(pydantic_version, pydantic_compiled)))
    app.add_middleware(BodySizeLimit, max_body_bytes=settings.max_body_bytes)
    app.add_exception_handler(RequestValidationError, answer_validation_error)
    for connection_error in (OperationalError, InterfaceError, PoolTimeoutError):
        app.add_exception_handler(connection_error, answer_database_error)
    return app


class EscapedJSONResponse(JSONResponse):
    """JSON with non-ASCII characters escaped (equivalent JSON, always encodable)."""

    def render(self, content: object) -> bytes:
        # allow_nan=False: strict JSON or an error here, never a bare NaN in a response.
        return json.dumps(
            content, ensure_ascii=True, allow_nan=False, separators=(",", ":")
        ).encode("ascii")


async def answer_validation_error(request: Request, error: Exception) -> JSONResponse:
    """FastAPI's own 422 body, escaped (Pydantic 2 echoes the input in each error, and an input
    with a lone surrogate, valid JSON "\\ud800", cannot be encoded as UTF-8, which turned the
    422 into a 500), and bounded: echoed inputs cut down, NaN spelled out (error_bodies.py)."""
    assert isinstance(error, RequestValidationError)
    return EscapedJSONResponse(
        {"detail": bounded_errors(jsonable_encoder(error.errors()))},
        status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
    )


async def answer_database_error(request: Request, error: Exception) -> JSONResponse:
    """A database that went away mid-run is a 503 for the client, not an opaque 500."""
    return JSONResponse(
        {"detail": "Database unavailable"}, status_code=status.HTTP_503_SERVICE_UNAVAILABLE
    )
