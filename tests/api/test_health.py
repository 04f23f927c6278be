"""GET /health, /docs, and what happens when the database goes away under a running app."""

import re

import httpx
import psycopg
import pytest

from commons.arms import ARMS
from tests import loopback
from tests.app_processes import APP_NAMES, RunningApp, start_app, stop_app
from tests.database_helpers import drop_database, recreate_database
from tests.factories import post_body

# The installed Pydantic: v1-shim runs app_v1's code on Pydantic 2 (through pydantic.v1).
EXPECTED_PYDANTIC_MAJOR = {"v1": "1.10.", "v1-shim": "2.", "v2": "2.", "v2-latest": "2."}
PINNED_FASTAPI = "0.125.0"  # v1 and v2: the same FastAPI, so Pydantic is their only difference
# v2-latest exists for FastAPI's newer response path: 0.130 serialises with Pydantic's Rust
# serializer when a route has a response model.
LATEST_FASTAPI_AT_LEAST = (0, 130)


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:3])


def test_health_reports_versions_and_database(client: httpx.Client, app: RunningApp) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["database"]) == ("ok", "ok")
    versions = body["versions"]
    runs_v1_code = ARMS[app.name].package == "app_v1"
    assert set(versions) == {
        "python",
        "fastapi",
        "starlette",
        "pydantic",
        "pydantic_compiled",
        "pydantic_core",
        "sqlalchemy",
        "psycopg",
        *(["pydantic_v1"] if runs_v1_code else []),
    }
    if runs_v1_code:  # the pydantic.v1 it runs on: 1.10's own, or the one inside Pydantic 2
        assert versions["pydantic_v1"].startswith("1.10.")
    assert versions["pydantic"].startswith(EXPECTED_PYDANTIC_MAJOR[app.name])
    if app.name == "v2-latest":
        assert version_tuple(versions["fastapi"]) >= LATEST_FASTAPI_AT_LEAST
    else:
        assert versions["fastapi"] == PINNED_FASTAPI
    assert versions["sqlalchemy"].startswith("2.")
    assert versions["psycopg"].startswith("3.")
    assert isinstance(versions["pydantic_compiled"], bool)
    # Pydantic 1.10 has no compiled core; every arm on Pydantic 2 (v1-shim too) names its own.
    if versions["pydantic"].startswith("1."):
        assert versions["pydantic_core"] is None
    else:
        assert versions["pydantic_core"].startswith("2.")


def test_v1_shim_is_v1s_code_on_pure_python_pydantic_v1(
    running_apps: dict[str, RunningApp],
) -> None:
    """The halfway step: the same FastAPI and libraries as v1, the same pydantic.v1 version,
    on Pydantic 2, where pydantic.v1 is pure Python (1.10's PyPI wheels are compiled)."""
    v1, shim, v2 = (
        loopback.get(f"{running_apps[arm].base_url}/health").json()["versions"]
        for arm in ("v1", "v1-shim", "v2")
    )
    for library in ("python", "fastapi", "starlette", "sqlalchemy", "psycopg"):
        assert shim[library] == v1[library], library
    assert shim["pydantic"] == v2["pydantic"] and shim["pydantic_v1"] == v1["pydantic_v1"]
    assert (v1["pydantic_compiled"], shim["pydantic_compiled"]) == (True, False)


def test_both_apps_share_everything_but_pydantic(running_apps: dict[str, RunningApp]) -> None:
    versions = {
        name: loopback.get(f"{app.base_url}/health").json()["versions"]
        for name, app in running_apps.items()
    }
    for library in ("python", "fastapi", "starlette", "sqlalchemy", "psycopg"):
        assert versions["v1"][library] == versions["v2"][library], library
    assert versions["v1"]["pydantic"] != versions["v2"]["pydantic"]


def test_v2_latest_differs_from_v2_in_fastapi_only(running_apps: dict[str, RunningApp]) -> None:
    """Starlette moves with FastAPI (0.130+ requires a newer one); nothing else may."""
    versions = {
        name: loopback.get(f"{app.base_url}/health").json()["versions"]
        for name, app in running_apps.items()
    }
    latest, v2 = versions["v2-latest"], versions["v2"]
    for library in ("python", "pydantic", "pydantic_compiled", "sqlalchemy", "psycopg"):
        assert latest[library] == v2[library], library
    assert version_tuple(latest["fastapi"]) > version_tuple(v2["fastapi"])


def test_docs_and_openapi_are_served(client: httpx.Client) -> None:
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    info = client.get("/openapi.json").json()["info"]
    versions = client.get("/health").json()["versions"]
    # v2 and v2-latest run the same code, and so do v1 and v1-shim: their /docs say which
    # FastAPI, and which Pydantic under pydantic.v1, each runs.
    shim = "pydantic_v1" in versions and versions["pydantic_v1"] != versions["pydantic"]
    code_major = "1" if "pydantic_v1" in versions else versions["pydantic"][0]
    runs_on = f"Pydantic {versions['pydantic']}'s pydantic.v1 and " if shim else ""
    assert info["title"] == (
        f"Pydantic v{code_major} lab on {runs_on}FastAPI {versions['fastapi']}"
    )
    assert f"Pydantic {versions['pydantic']}" in info["description"]
    assert f"<title>{info['title']}" in docs.text


@pytest.mark.parametrize(
    ("page", "assets"),
    [("/docs", ("swagger-ui-bundle.js", "swagger-ui.css")), ("/redoc", ("redoc.standalone.js",))],
)
def test_interactive_docs_need_no_network(client: httpx.Client, page: str, assets) -> None:
    """Swagger UI and ReDoc load their JavaScript and CSS from the app, not from a CDN."""
    html = client.get(page).text
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and not [source for source in sources if "://" in source], sources
    for asset in assets:
        [url] = [source for source in sources if source.endswith(asset)]
        response = client.get(url)
        assert response.status_code == 200 and len(response.content) > 100_000, url


@pytest.mark.parametrize("app_name", APP_NAMES)
def test_lost_database_gives_503_not_500(server_url: str, app_name: str) -> None:
    database = f"pydantic_lab_test_lost_{app_name}"
    app = start_app(app_name, recreate_database(server_url, database))
    try:
        drop_database(server_url, database)  # terminates the app's connections too
        health = loopback.get(f"{app.base_url}/health", timeout=30)
        assert health.status_code == 503
        assert health.json()["database"] == "unavailable"
        listing = loopback.get(f"{app.base_url}/posts", timeout=30)
        assert listing.status_code == 503
        assert listing.json() == {"detail": "Database unavailable"}
    finally:
        stop_app(app.process, app.log_path)
        drop_database(server_url, database)


@pytest.mark.parametrize("app_name", APP_NAMES)
def test_health_says_what_the_routes_find(server_url: str, app_name: str) -> None:
    """A database that answers `SELECT 1` but cannot serve the posts (the table gone, here) is
    unavailable for /health too, and every route answers 503, not 500; both recover with it.
    (Before: /health 200 while /posts answered 500.)"""
    database = f"pydantic_lab_test_honest_{app_name.replace('-', '_')}"
    database_url = recreate_database(server_url, database)
    app = start_app(app_name, database_url)
    try:
        with loopback.client(base_url=app.base_url, timeout=30) as client:
            created = client.post("/posts", json=post_body()).json()["id"]
            with psycopg.connect(database_url, autocommit=True) as connection:
                connection.execute("ALTER TABLE posts RENAME TO posts_elsewhere")
                health = client.get("/health")
                answers = [
                    client.get("/posts"),
                    client.get(f"/posts/{created}"),
                    client.post("/posts", json=post_body()),
                    client.put(f"/posts/{created}", json=post_body()),
                    client.delete(f"/posts/{created}"),
                ]
                connection.execute("ALTER TABLE posts_elsewhere RENAME TO posts")
            assert (health.status_code, health.json()["database"]) == (503, "unavailable")
            assert [answer.status_code for answer in answers] == [503] * len(answers)
            assert {answer.json()["detail"] for answer in answers} == {"Database unavailable"}
            assert client.get("/health").json()["database"] == "ok"
            assert client.get(f"/posts/{created}").status_code == 200
    finally:
        stop_app(app.process, app.log_path)
        drop_database(server_url, database)
