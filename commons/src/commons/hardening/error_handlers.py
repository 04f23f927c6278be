"""The app's error handlers: 422 bodies escaped and bounded, an unreadable body a 422 (not FastAPI's
400), a 405 that names every allowed method, a database gone or unusable a 503 (not a 500)."""

import json
import logging

from fastapi import FastAPI, Request, Response, status
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import InterfaceError, InternalError, OperationalError, ProgrammingError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from commons.hardening.database_deadline import DatabaseDeadlineExceeded
from commons.hardening.error_bodies import bounded_errors

logger = logging.getLogger(__name__)


def add_error_handlers(app: FastAPI) -> None:
    """Register on `app` every handler below, each for the errors it answers."""
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
