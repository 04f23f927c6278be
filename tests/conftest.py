"""Fixtures: a real PostgreSQL (embedded unless DATABASE_URL is set), every app, HTTP clients."""

import os
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from commons.config import Settings, parse_database_url
from commons.database import create_database_engine, create_schema
from commons.embedded_postgres import embedded_postgres
from tests import loopback
from tests.app_processes import APP_NAMES, RunningApp, start_app, stop_app
from tests.database_helpers import drop_database, recreate_database, truncate_posts

# Test databases get their own names, so DATABASE_URL may point at a server holding real data;
# each pytest-xdist worker its own, so workers sharing that server never share a database.
TEST_DATABASE_PREFIX = f"pydantic_lab_test_{os.environ.get('PYTEST_XDIST_WORKER', 'gw0')}"


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    """A PostgreSQL server: DATABASE_URL if set, else a throwaway embedded one."""
    configured_url = os.environ.get("DATABASE_URL", "").strip()
    if configured_url:
        yield configured_url
        return
    with embedded_postgres() as server:
        yield server.url


@pytest.fixture(scope="session")
def commons_database_url(server_url: str) -> Iterator[str]:
    database = f"{TEST_DATABASE_PREFIX}_commons"
    yield recreate_database(server_url, database)
    drop_database(server_url, database)


@pytest.fixture(scope="session")
def engine(commons_database_url: str) -> Iterator[Engine]:
    engine = create_database_engine(
        Settings(parse_database_url(commons_database_url), pool_size=2, max_overflow=2)
    )
    create_schema(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def session(engine: Engine, commons_database_url: str) -> Iterator[Session]:
    truncate_posts(commons_database_url)
    with Session(engine, expire_on_commit=False) as session:
        yield session


# The shared apps judge a client's pace over 30 s windows (the body timeout), at one byte a
# second. The defaults (16 KiB/s and 8 KiB/s over 5 s) are a rate, and on two CPUs shared with the
# rest of the suite a schemathesis request once waited a whole 5 s window for a 100-byte body it
# had sent at once, and got 408: the machine's load, not the code. The floors are asserted on
# apps of their own, with their own settings (test_unfinished_bodies.py, test_hostile_clients.py).
PATIENT_CLIENT_FLOORS = {
    "MIN_UPLOAD_BYTES_PER_SECOND": "1",
    "MIN_SEND_BYTES_PER_SECOND": "1",
    "RATE_WINDOW_SECONDS": "30",
}


@pytest.fixture(scope="session")
def running_apps(server_url: str) -> Iterator[dict[str, RunningApp]]:
    apps: dict[str, RunningApp] = {}
    try:
        for app_name in APP_NAMES:
            database = f"{TEST_DATABASE_PREFIX}_app_{app_name}"
            apps[app_name] = start_app(
                app_name,
                recreate_database(server_url, database),
                extra_environment=PATIENT_CLIENT_FLOORS,
            )
        yield apps
    finally:
        for app in apps.values():
            stop_app(app.process, app.log_path)
        for app_name in APP_NAMES:
            drop_database(server_url, f"{TEST_DATABASE_PREFIX}_app_{app_name}")


@pytest.fixture(params=APP_NAMES)
def app(request: pytest.FixtureRequest, running_apps: dict[str, RunningApp]) -> RunningApp:
    """Each API test runs once per app, against an empty posts table."""
    running_app = running_apps[request.param]
    truncate_posts(running_app.database_url)
    return running_app


@pytest.fixture
def client(app: RunningApp) -> Iterator[httpx.Client]:
    with loopback.client(base_url=app.base_url, timeout=30) as client:
        yield client


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Schemathesis' runs (half a minute or more each, one per arm) go to the pytest-xdist
    workers first, so they do not all start last and hold the suite's end; tests marked `alone`
    are left out of the workers (scripts/run_tests.sh runs them in a serial pass)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # a time measured beside other tests means little
        alone = [item for item in items if item.get_closest_marker("alone")]
        config.hook.pytest_deselected(items=alone)
        items[:] = [item for item in items if not item.get_closest_marker("alone")]
    items.sort(key=lambda item: item.path.name != "test_schemathesis.py")  # stable
