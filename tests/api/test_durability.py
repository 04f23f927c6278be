"""Every acknowledged write is stored: under kill -9 of the app, and across a database restart
(fast shutdown, every session cut) in the middle of a write load."""

import threading
import time
from collections.abc import Callable, Iterator

import httpx
import psutil
import psycopg
import pytest

from commons.embedded_postgres import EmbeddedPostgres, embedded_postgres
from tests import loopback
from tests.app_processes import APP_NAMES, RunningApp, start_app, stop_app
from tests.database_helpers import recreate_database
from tests.factories import post_body

# Its module-scoped servers start once: the module runs on one pytest-xdist worker.
pytestmark = pytest.mark.xdist_group("test_durability")

WRITERS = 8
# Bounds on the load, so a test ends whatever the server does.
LOAD_LIMIT_S = 60
CLIENT_TIMEOUT_S = 10


class WriteLoad:
    """Writers that POST until stopped and keep the id of every 201 (an acknowledged write)."""

    def __init__(self, app: RunningApp) -> None:
        self.app = app
        self.acknowledged: list[int] = []
        self.statuses: dict[int | str, int] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.write) for _ in range(WRITERS)]

    def write(self) -> None:
        deadline = time.monotonic() + LOAD_LIMIT_S
        with loopback.client(base_url=self.app.base_url, timeout=CLIENT_TIMEOUT_S) as client:
            while not self.stop.is_set() and time.monotonic() < deadline:
                try:
                    response = client.post("/posts", json=post_body(title="durable"))
                    outcome: int | str = response.status_code
                except httpx.TransportError as error:  # the app was killed mid-request
                    outcome = type(error).__name__
                    time.sleep(0.05)
                with self.lock:
                    self.statuses[outcome] = self.statuses.get(outcome, 0) + 1
                    if outcome == 201:
                        self.acknowledged.append(response.json()["id"])

    def count(self, outcome: int | str = 201) -> int:
        with self.lock:
            return self.statuses.get(outcome, 0)

    def wait_for(self, condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + LOAD_LIMIT_S
        while not condition():
            assert time.monotonic() < deadline, f"the load never got there: {self.statuses}"
            time.sleep(0.02)

    def __enter__(self) -> "WriteLoad":
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()


def stored_ids(database_url: str) -> set[int]:
    with psycopg.connect(database_url) as connection:
        return {row[0] for row in connection.execute("SELECT id FROM posts")}


def assert_every_acknowledged_write_stored(load: WriteLoad, database_url: str) -> None:
    acknowledged = set(load.acknowledged)
    assert len(acknowledged) == len(load.acknowledged)  # no id answered twice
    stored = stored_ids(database_url)
    assert acknowledged <= stored
    # Stored may exceed acknowledged by the writes committed whose answer was cut off.
    assert len(stored) - len(acknowledged) <= WRITERS


def kill_app(app: RunningApp) -> None:
    """SIGKILL the app and everything under it (`uv run` starts uvicorn as its child)."""
    root = psutil.Process(app.process.pid)
    for process in [*root.children(recursive=True), root]:
        process.kill()
    app.process.wait()


@pytest.fixture(scope="module")
def private_server() -> Iterator[EmbeddedPostgres]:
    """A server of this module's own: restarting the shared one would disturb other tests."""
    with embedded_postgres() as server:
        yield server


@pytest.mark.parametrize("app_name", APP_NAMES)
def test_kill_9_loses_no_acknowledged_write(
    private_server: EmbeddedPostgres, app_name: str
) -> None:
    database_url = recreate_database(private_server.url, f"killed_{app_name.replace('-', '_')}")
    app = start_app(app_name, database_url)
    try:
        with WriteLoad(app) as load:
            load.wait_for(lambda: load.count() >= 300)
            kill_app(app)
    finally:
        stop_app(app.process, app.log_path)
    assert len(load.acknowledged) >= 300
    assert_every_acknowledged_write_stored(load, database_url)


@pytest.mark.parametrize("app_name", APP_NAMES)
def test_database_restart_loses_no_acknowledged_write(
    private_server: EmbeddedPostgres, app_name: str
) -> None:
    database_url = recreate_database(private_server.url, f"restarted_{app_name.replace('-', '_')}")
    app = start_app(app_name, database_url)
    try:
        with WriteLoad(app) as load:
            load.wait_for(lambda: load.count() >= 200)
            private_server.restart()
            after_restart = load.count()
            load.wait_for(lambda: load.count() >= after_restart + 200)  # writes resume
        assert set(load.statuses) <= {201, 503}, load.statuses  # refused while down, no 500
    finally:
        stop_app(app.process, app.log_path)
    assert_every_acknowledged_write_stored(load, database_url)
