"""A frozen database (its processes stopped, as in a network partition) gives every request
that needs it a 503 (after DATABASE_TIMEOUT_SECONDS, plus up to 2 s when a connection was being
opened), while database-free endpoints keep answering; the app recovers when the database does.
The test asserts the 503s and that nothing hangs, not how fast: that is the machine's business."""

import os
import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import httpx
import psutil
import pytest

from commons.application import uses_database
from commons.embedded_postgres import EmbeddedPostgres, embedded_postgres
from tests import loopback
from tests.app_processes import APP_NAMES, RunningApp, start_app, stop_app
from tests.database_helpers import recreate_database

# Its module-scoped servers start once: the module runs on one pytest-xdist worker.
pytestmark = pytest.mark.xdist_group("test_frozen_database")

DATABASE_TIMEOUT_S = 2
# Far above the configured bound, so only a hang (the bug) can reach it; how fast the 503 comes
# is the benchmark's business, not this test's.
CLIENT_TIMEOUT_S = 30
CONCURRENT_REQUESTS = 60  # more than the pool's 20 connections and anyio's 40 worker threads


@pytest.fixture(scope="module")
def private_server() -> Iterator[EmbeddedPostgres]:
    """A server of this module's own: freezing the shared one would stall every other test."""
    with embedded_postgres() as server:
        yield server


@contextmanager
def frozen(server: EmbeddedPostgres) -> Iterator[None]:
    """SIGSTOP the postmaster and every backend: connections stay open, nothing answers."""
    assert server.pid is not None
    postmaster = psutil.Process(server.pid)
    processes = [postmaster, *postmaster.children(recursive=True)]
    try:
        for process in processes:
            send_signal(process.pid, signal.SIGSTOP)
        yield
    finally:
        for process in processes:
            send_signal(process.pid, signal.SIGCONT)


def send_signal(pid: int, signal_number: int) -> None:
    try:
        os.kill(pid, signal_number)
    except ProcessLookupError:  # a backend that was exiting anyway, reaped once resumed
        pass


NEW_POST = {"title": "t", "content": "c", "published_at": "2024-01-01T00:00:00Z"}


def database_requests(client: httpx.Client) -> list[tuple[str, str, dict]]:
    created = client.post("/posts", json=NEW_POST).json()
    return [
        ("GET", "/posts?per_page=5", {}),
        ("GET", "/posts_related/eager?per_page=5", {}),
        ("GET", "/posts_related/lazy?per_page=5", {}),
        ("GET", "/async/posts?per_page=5", {}),
        ("POST", "/async/posts", {"json": NEW_POST}),
        ("GET", "/async/posts_related/eager?per_page=5", {}),
        ("GET", f"/posts/{created['id']}", {}),
        ("POST", "/posts", {"json": NEW_POST}),
        ("PUT", f"/posts/{created['id']}", {"json": NEW_POST}),
        ("DELETE", f"/posts/{created['id']}", {}),
        ("GET", "/health", {}),
    ]


@pytest.mark.parametrize("app_name", APP_NAMES)
def test_frozen_database_gives_503_in_bounded_time(
    private_server: EmbeddedPostgres, app_name: str
) -> None:
    database_url = recreate_database(private_server.url, f"frozen_{app_name.replace('-', '_')}")
    app: RunningApp = start_app(
        app_name,
        database_url,
        extra_environment={"DATABASE_TIMEOUT_SECONDS": str(DATABASE_TIMEOUT_S)},
    )
    limits = httpx.Limits(max_connections=CONCURRENT_REQUESTS + 10)
    try:
        with loopback.client(
            base_url=app.base_url, timeout=CLIENT_TIMEOUT_S, limits=limits
        ) as client:
            requests = database_requests(client)
            with ThreadPoolExecutor(CONCURRENT_REQUESTS) as pool:
                # Warm both pools (the def routes' and the async ones'): every connection is
                # open and idle when the database freezes, so the watchdog must cut them.
                warm = [
                    pool.submit(client.get, path)
                    for _ in range(CONCURRENT_REQUESTS)
                    for path in ("/posts", "/async/posts")
                ]
                assert {future.result().status_code for future in warm} == {200}
                with frozen(private_server):
                    answers = [
                        pool.submit(client.request, method, path, **options)
                        for number in range(CONCURRENT_REQUESTS)
                        for method, path, options in [requests[number % len(requests)]]
                    ]
                    # Asked while every database request is stuck: no worker thread is free
                    # for it unless the database requests wait elsewhere.
                    synthetic = client.get("/posts_synthetic?per_page=5")
                    statuses = [future.result().status_code for future in answers]
            assert synthetic.status_code == 200
            assert statuses == [503] * CONCURRENT_REQUESTS
            assert client.get("/posts").status_code == 200, "no recovery after the freeze"
            assert client.get("/async/posts").status_code == 200, "no async recovery"
            assert client.get("/health").json()["database"] == "ok"
    finally:
        stop_app(app.process, app.log_path)


def test_exactly_the_database_routes_take_a_slot(client: httpx.Client) -> None:
    """The routes that document a 503 (the database ones) are the paths the slot middleware
    holds back; every other path (/posts_synthetic, the docs) never waits for a slot."""
    paths = client.get("/openapi.json").json()["paths"]
    for template, operations in paths.items():
        path = template.replace("{post_id}", "1")
        documents_503 = any("503" in operation["responses"] for operation in operations.values())
        assert uses_database(path) == documents_503, template
    for path in (
        "/docs",
        "/redoc",
        "/openapi.json",
        "/posts_synthetic",
        "/postsx",
        "/payloads/flat",
        "/statements",
        "/async/posts_synthetic",
    ):
        assert not uses_database(path), path
