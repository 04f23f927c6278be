"""Builds a FastAPI app from a schema set: settings, database, routes and error handlers."""

import json
import logging
import sys

import fastapi
from fastapi import FastAPI, Request, Response, status
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from sqlalchemy import Engine
from sqlalchemy.exc import InterfaceError, InternalError, OperationalError, ProgrammingError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from commons.body_limit import BodySizeLimit
from commons.config import ConfigurationError, Settings, load_settings
from commons.database import (
    DatabaseUnavailableError,
    create_database_engine,
    create_schema,
    create_session_factory,
)
from commons.database_deadline import (
    DatabaseDeadlineExceeded,
    DatabaseSlots,
    DatabaseSlotsMiddleware,
)
from commons.error_bodies import bounded_errors
from commons.health import build_health_router, collect_versions
from commons.ladder import build_ladder_router
from commons.payload_routes import build_payload_router
from commons.routes import SchemaSet, build_posts_router

logger = logging.getLogger(__name__)


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
    app.include_router(build_posts_router(schemas))
    app.include_router(build_ladder_router(schemas))
    app.include_router(build_payload_router(schemas))
    versions = collect_versions(pydantic_version, pydantic_compiled, pydantic_v1_version)
    app.include_router(build_health_router(versions))
    # Added first, so it runs inside BodySizeLimit: bodies it buffers are already bounded.
    app.add_middleware(
        DatabaseSlotsMiddleware,
        slots=DatabaseSlots(database_slot_count(settings), settings.database_timeout_s),
        uses_database=uses_database,
    )
    app.add_middleware(BodySizeLimit, max_body_bytes=settings.max_body_bytes)
    app.add_exception_handler(RequestValidationError, answer_validation_error)
    app.add_exception_handler(StarletteHTTPException, answer_http_error)
    for connection_error in (
        OperationalError,
        InterfaceError,
        PoolTimeoutError,
        DatabaseDeadlineExceeded,
        InternalError,
        ProgrammingError,
    ):
        app.add_exception_handler(connection_error, answer_database_error)
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
    slot (commons/database_deadline.py); /posts_synthetic, /docs and the rest never wait for
    one. tests/api/test_frozen_database.py checks it against the routes that document a 503."""
    return path in ("/posts", "/posts_bulk", "/health") or path.startswith("/posts/")


def database_slot_count(settings: Settings) -> int | None:
    """One slot per connection the pool may open; None (no limit) for an unbounded pool."""
    if settings.pool_size == 0:  # SQLAlchemy's QueuePool: 0 means no limit
        return None
    return settings.pool_size + settings.max_overflow


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


BODY_PARSE_ERROR = "There was an error parsing the body"  # FastAPI's 400, for any read failure


def unreadable_body_reason(request: Request, cause: BaseException | None) -> str:
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        return f"Content-Encoding {encoding!r} is not accepted: send the JSON uncompressed"
    if isinstance(cause, UnicodeDecodeError):
        return "the body is not valid UTF-8 JSON"
    if isinstance(cause, RecursionError):
        return "the JSON is nested too deeply"
    return "the body could not be read as JSON"


CANDIDATE_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def allowed_methods(request: Request) -> list[str]:
    """Methods some route fully matches on this path. Asked of each route with `matches` only:
    newer FastAPI wraps included routers, so walking their routes would not last."""
    return [
        method
        for method in CANDIDATE_METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] == Match.FULL
            for route in request.app.router.routes
        )
    ]


async def answer_http_error(request: Request, error: Exception) -> Response:
    """FastAPI's 400 'error parsing the body' (invalid UTF-8, JSON nested too deep, a compressed
    body) becomes a 422 that says which, like every other bad body; other errors pass through."""
    assert isinstance(error, StarletteHTTPException)
    if error.status_code == status.HTTP_405_METHOD_NOT_ALLOWED:
        # Starlette names the methods of the first route whose path matched (GET for OPTIONS
        # /posts); every route on the path counts.
        allow = ", ".join(allowed_methods(request))
        return JSONResponse({"detail": error.detail}, status_code=405, headers={"Allow": allow})
    if error.status_code == status.HTTP_400_BAD_REQUEST and error.detail == BODY_PARSE_ERROR:
        reason = unreadable_body_reason(request, error.__cause__)
        return EscapedJSONResponse(
            {"detail": [{"loc": ["body"], "msg": reason, "type": "body_unreadable"}]},
            status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
        )
    return await http_exception_handler(request, error)


async def answer_database_error(request: Request, error: Exception) -> JSONResponse:
    """A database that went away mid-run is a 503 for the client, not an opaque 500; and so is
    one that can no longer do what the routes ask (its table gone, read-only, a block it cannot
    read: ProgrammingError and InternalError), which /health reports the same way. Those are
    logged, as they may also be a bug."""
    if isinstance(error, InternalError | ProgrammingError):
        reason = str(error.orig or error).strip().splitlines()[0]
        logger.error(
            "%s %s: database error, answered 503: %s", request.method, request.url.path, reason
        )
    return JSONResponse(
        {"detail": "Database unavailable"}, status_code=status.HTTP_503_SERVICE_UNAVAILABLE
    )
