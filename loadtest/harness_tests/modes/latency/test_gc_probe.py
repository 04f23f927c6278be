"""The garbage-collection probe (commons/probes/gc_pauses.py): served by uvicorn around a test
app (garbage_app.py), it counts the collections the app's process runs and their pauses, hands
the longest pause since the previous reading, and passes the app's own routes through as they
are; in-process, it answers its route to loopback clients only."""

import asyncio
import gc
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from harness_tests.runner import free_port
from loadtest.lab.asgi_server import asgi_server
from loadtest.lab.processes import child_environment

LOADTEST_DIR = Path(__file__).resolve().parents[3]  # where `harness_tests` is importable from
GARBAGE_APP = "harness_tests.modes.latency.garbage_app:app"
PAUSES_PATH = "/lab-gc/pauses"
NOT_FOUND = b'{"detail":"Not Found"}'


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """The test app served through the probe by uvicorn: its base URL and the server's pid."""
    with asgi_server(
        "commons.probes.gc_pauses:app",
        tmp_path_factory.mktemp("gc_probe") / "probed_app.log",
        environment=child_environment(LAB_GC_APP=GARBAGE_APP),
        port=free_port(),
        app_dir=LOADTEST_DIR,
        ready_path="/hello",
    ) as served:
        yield served.url, served.pid


def reading(client: httpx.Client) -> dict[str, Any]:
    answer = client.get(PAUSES_PATH)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    found: dict[str, Any] = answer.json()
    return found


def test_a_full_collection_in_the_app_is_counted_with_its_pause(
    probed: tuple[str, int],
) -> None:
    base_url, pid = probed
    with httpx.Client(base_url=base_url) as client:
        before = reading(client)
        assert before["pid"] == pid  # uvicorn's own process: the app runs in it
        assert [len(generation) for generation in before["generations"]] == [3, 3, 3]
        garbage = client.get("/garbage")
        assert garbage.status_code == 200
        assert int(garbage.text) >= 20_000  # the 10,000 pairs were found unreachable
        after = reading(client)
        right_after = reading(client)

    old, new = before["generations"][2], after["generations"][2]
    assert new["collections"] >= old["collections"] + 1
    assert new["pause_s"] > old["pause_s"]
    # The longest since the previous reading: at least /garbage's collection, at most all the
    # pause time added since (a collection of 20,000 objects takes well under a second).
    assert 0 < new["longest_s"] <= new["pause_s"] - old["pause_s"]
    assert new["longest_s"] < 1
    # Read again at once: the longest pauses start again from nothing. A collection of any
    # generation between the two readings (an allocation can start one) counts in both.
    for earlier, later in zip(after["generations"], right_after["generations"], strict=True):
        if later["collections"] == earlier["collections"]:
            assert later["longest_s"] == 0
            assert later["pause_s"] == earlier["pause_s"]
        else:
            assert 0 < later["longest_s"] <= later["pause_s"] - earlier["pause_s"]
    assert right_after["generations"][2]["longest_s"] < new["longest_s"] or (
        right_after["generations"][2]["collections"] > new["collections"]
    )


def test_the_apps_own_routes_pass_through_unchanged(probed: tuple[str, int]) -> None:
    base_url, _ = probed
    with httpx.Client(base_url=base_url) as client:
        hello = client.get("/hello")
        assert (hello.status_code, hello.content) == (200, b"hello")
        assert hello.headers["x-garbage-app"] == "yes"
        body = json.dumps({"title": "é" * 50_000}).encode()  # in several ASGI messages
        echo = client.post("/echo", content=body)
        assert (echo.status_code, echo.content) == (201, body)
        assert echo.headers["x-garbage-app"] == "yes"
        # Paths beside the probe's own are the app's: its 404, not the probe's.
        for path in ("/lab-gc", "/lab-gc/pauses/", "/lab-gc/other", "/missing"):
            missing = client.get(path)
            assert (missing.status_code, missing.content) == (404, b"no such path here"), path
        # The probe's path with another method is still the probe's reading.
        assert "generations" in client.post(PAUSES_PATH).json()


# In-process: a crafted ASGI scope, to be a client that is not on the loopback interface.


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A fresh copy of the probe module, imported with LAB_GC_APP naming the test app (so its
    hook goes into this process's gc.callbacks, and comes out at the end)."""
    monkeypatch.setenv("LAB_GC_APP", GARBAGE_APP)
    spec = importlib.util.find_spec("commons.probes.gc_pauses")
    assert spec is not None and spec.origin is not None
    copy = importlib.util.spec_from_file_location("gc_pauses_under_test", spec.origin)
    assert copy is not None and copy.loader is not None
    module = importlib.util.module_from_spec(copy)
    hooks = len(gc.callbacks)
    copy.loader.exec_module(module)
    try:
        assert module.inner is not None
        assert len(gc.callbacks) == hooks + 1
        yield module
    finally:
        gc.callbacks.remove(module.pauses)


def call(module: ModuleType, path: str, client: tuple[str, int] | None) -> tuple[int, bytes]:
    """One GET through the probe's ASGI app: the status and body it sends."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [],
        "client": client,
        "server": ("127.0.0.1", 8000),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(module.app(scope, receive, send))
    assert [message["type"] for message in sent] == ["http.response.start", "http.response.body"]
    return sent[0]["status"], sent[1]["body"]


def test_only_loopback_clients_get_the_reading(probe: ModuleType) -> None:
    for client in (("10.1.2.3", 40000), ("192.168.0.7", 1234), ("2001:db8::1", 5)):
        assert call(probe, PAUSES_PATH, client) == (404, NOT_FOUND), client
    assert call(probe, PAUSES_PATH, None) == (404, NOT_FOUND)  # no client known (a socket)
    for client in (("127.0.0.1", 40000), ("::1", 40000)):
        status, body = call(probe, PAUSES_PATH, client)
        assert status == 200, client
        assert len(json.loads(body)["generations"]) == 3
    # Anyone may use the app itself.
    assert call(probe, "/hello", ("10.1.2.3", 40000)) == (200, b"hello")


def test_the_hook_counts_this_processs_collections(probe: ModuleType) -> None:
    before = json.loads(call(probe, PAUSES_PATH, ("127.0.0.1", 1))[1])["generations"][2]
    gc.collect()
    after = json.loads(call(probe, PAUSES_PATH, ("127.0.0.1", 1))[1])["generations"][2]
    assert after["collections"] >= before["collections"] + 1
    assert after["pause_s"] > before["pause_s"] and after["longest_s"] > 0


def test_imported_without_an_app_it_adds_no_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    # What the harness does for PAUSES_PATH: nothing served, nothing hooked.
    monkeypatch.delenv("LAB_GC_APP", raising=False)
    spec = importlib.util.find_spec("commons.probes.gc_pauses")
    assert spec is not None and spec.origin is not None
    copy = importlib.util.spec_from_file_location("gc_pauses_unserved", spec.origin)
    assert copy is not None and copy.loader is not None
    module = importlib.util.module_from_spec(copy)
    hooks = list(gc.callbacks)
    copy.loader.exec_module(module)
    assert module.inner is None
    assert gc.callbacks == hooks
    assert module.PAUSES_PATH == PAUSES_PATH
