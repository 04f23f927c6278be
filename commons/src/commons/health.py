"""GET /health: library versions and whether the database answers."""

import importlib.metadata
import platform
from typing import Any

import fastapi
import psycopg
import sqlalchemy
import starlette
from fastapi import APIRouter, Request, status
from fastapi.responses import JSONResponse

from commons.database import database_serves_posts


def collect_versions(
    pydantic_version: str, pydantic_compiled: bool, pydantic_v1_version: str | None = None
) -> dict[str, Any]:
    """`pydantic` is the installed distribution; an app written for Pydantic 1 also says which
    `pydantic.v1` it runs on (`pydantic_v1`: 1.10's own, or the one inside Pydantic 2), and
    `pydantic_compiled` is about the Pydantic its models run on."""
    versions = {
        "python": platform.python_version(),
        "fastapi": fastapi.__version__,
        "starlette": starlette.__version__,
        "pydantic": pydantic_version,
        "pydantic_compiled": pydantic_compiled,
        "pydantic_core": core_version(),
        "sqlalchemy": sqlalchemy.__version__,
        "psycopg": psycopg.__version__,
    }
    if pydantic_v1_version is not None:
        versions["pydantic_v1"] = pydantic_v1_version
    return versions


def core_version() -> str | None:
    """pydantic-core's version, where the environment has it (Pydantic 2; 1.10 has no core)."""
    try:
        return importlib.metadata.version("pydantic-core")
    except importlib.metadata.PackageNotFoundError:
        return None


def build_health_router(versions: dict[str, Any]) -> APIRouter:
    router = APIRouter(tags=["health"])

    @router.get(
        "/health",
        responses={503: {"description": "The database cannot be reached, or its posts read"}},
    )
    def read_health(request: Request) -> JSONResponse:
        """Report library versions and whether the database serves the posts."""
        if database_serves_posts(request.app.state.engine):
            body = {"status": "ok", "database": "ok", "versions": versions}
            return JSONResponse(body, status_code=status.HTTP_200_OK)
        body = {"status": "degraded", "database": "unavailable", "versions": versions}
        return JSONResponse(body, status_code=status.HTTP_503_SERVICE_UNAVAILABLE)

    return router
