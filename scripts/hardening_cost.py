"""What this code's hardening costs a request on the measured path, in-process and paired.

Run in an app's environment, against a database (DATABASE_URL, as for the app itself):

    DATABASE_URL=... app_v2/.venv/bin/python scripts/hardening_cost.py --before <git revision>

Each request goes through a uvicorn protocol (fed from memory, no socket) into a FastAPI app
built the way the arm builds it. "Before" is the protocol of commons/hardening/http_protocol.py
(commons/http_protocol.py before the hardening got its own package in commit 82ac5ad) at
<git revision> and this checkout's app without what <git revision> did not have yet (the
posts routes' AsciiIntegersRoute, the payload routes' PayloadRowsMiddleware); "after" is this
checkout's. The
two are timed in alternating batches of requests in one process, pinned to one CPU, so the
machine's drift reaches both alike; a figure is the median of the paired differences and ratios.
"""

import argparse
import asyncio
import importlib
import importlib.util
import os
import statistics
import subprocess
import time
import timeit
from pathlib import Path
from types import ModuleType
from typing import Any

from fastapi.routing import APIRoute
from uvicorn.config import Config
from uvicorn.server import ServerState

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
# Where the protocol lives, then where it lived before commons/hardening/ (commit 82ac5ad):
# --before may name either side.
PROTOCOL_PATHS = (
    "commons/src/commons/hardening/http_protocol.py",
    "commons/src/commons/http_protocol.py",
)
POST_BODY = b'{"title":"t","content":"c","published_at":"2024-01-01T12:00:00Z"}'
# WRITE first: it leaves READ the posts to list (100 a page, as the benchmark asks).
REQUESTS = {
    "WRITE": b"POST /posts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\n\r\n%s" % (len(POST_BODY), POST_BODY),
    "READ synthetic": b"GET /posts_synthetic?per_page=100 HTTP/1.1\r\nHost: x\r\n\r\n",
    "READ": b"GET /posts?per_page=100 HTTP/1.1\r\nHost: x\r\n\r\n",
    # The sweep's flat shape at 100 posts: through PayloadRowsMiddleware.
    "payload flat 100": b"GET /payloads/flat?items=100 HTTP/1.1\r\nHost: x\r\n\r\n",
}


class MemoryTransport(asyncio.Transport):
    """Takes what the protocol writes and forgets it; the protocol's only peer."""

    def __init__(self) -> None:
        super().__init__()
        self.closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        pass

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def pause_reading(self) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0  # everything written has left at once

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}.get(
            name, default
        )


def shown_at(revision: str, path: str) -> subprocess.CompletedProcess[str]:
    """`git show REVISION:PATH` (its return code says whether the file was there)."""
    return subprocess.run(
        ["git", "show", f"{revision}:{path}"], cwd=REPOSITORY_ROOT, capture_output=True, text=True
    )


def load_protocol_at(revision: str) -> ModuleType:
    for protocol_path in PROTOCOL_PATHS:
        shown = shown_at(revision, protocol_path)
        if shown.returncode == 0:
            break
    shown.check_returncode()  # at neither path: CalledProcessError, as before
    source = shown.stdout
    spec = importlib.util.spec_from_loader("http_protocol_before", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, f"{revision}:{protocol_path}", "exec"), module.__dict__)
    return module


def had_at(revision: str, path: str, text: str) -> bool:
    """Whether the file at `path` held `text` at `revision` (False where it did not exist)."""
    shown = shown_at(revision, path)
    return shown.returncode == 0 and text in shown.stdout


def build_apps(app_module: str, revision: str) -> tuple[Any, Any]:
    """The arm's app as this checkout builds it, and the same without what `revision` lacked:
    AsciiIntegersRoute on the routes, PayloadRowsMiddleware around them."""
    import commons.routes
    from commons.hardening.payload_rows import PayloadRowsMiddleware

    after = importlib.import_module(app_module).app
    ascii_route = commons.routes.AsciiIntegersRoute
    if not had_at(revision, "commons/src/commons/routes.py", "class AsciiIntegersRoute"):
        commons.routes.AsciiIntegersRoute = APIRoute  # type: ignore[misc]
    try:
        module = importlib.reload(importlib.import_module(app_module))
        before = module.app
    finally:
        commons.routes.AsciiIntegersRoute = ascii_route  # type: ignore[misc]
    if not had_at(revision, "commons/src/commons/application.py", "PayloadRowsMiddleware"):
        # The stack is built at the first request: taken out before it.
        before.user_middleware = [
            middleware
            for middleware in before.user_middleware
            if middleware.cls is not PayloadRowsMiddleware
        ]
    return before, after


async def bare_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Reads the body and answers at once: what is left is the protocol's own cost."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", b"2")],
        }
    )
    await send({"type": "http.response.body", "body": b"{}"})


class Connection:
    """One keep-alive connection: a protocol instance fed one request at a time."""

    def __init__(self, protocol_class: type, app: Any, loop: asyncio.AbstractEventLoop) -> None:
        config = Config(app=app, lifespan="off", access_log=False, log_level="warning")
        config.load()
        self.state = ServerState()
        self.protocol = protocol_class(
            config=config, server_state=self.state, app_state={}, _loop=loop
        )
        self.protocol.connection_made(MemoryTransport())
        self.answered = asyncio.Event()
        completes = self.protocol.on_response_complete

        def on_response_complete() -> None:
            completes()
            self.answered.set()

        self.protocol.on_response_complete = on_response_complete

    async def finish(self) -> None:
        """Let the last request's task end (a session closes after its answer is sent)."""
        await asyncio.gather(*self.state.tasks)

    async def send(self, request: bytes) -> None:
        self.answered.clear()
        self.protocol.data_received(request)
        await self.answered.wait()


async def time_batch(connection: Connection, request: bytes, count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        await connection.send(request)
    return (time.perf_counter() - started) / count


def median_pairs(pairs: list[tuple[float, float]]) -> tuple[float, float, float, float]:
    """Median before (µs), median after - before (µs) and the interquartile range of those
    differences (µs), median after / before."""
    differences = [(after - before) * 1e6 for before, after in pairs]
    quartiles = statistics.quantiles(differences, n=4)
    return (
        statistics.median(before for before, _ in pairs) * 1e6,
        statistics.median(differences),
        quartiles[2] - quartiles[0],
        statistics.median(after / before for before, after in pairs),
    )


async def measure(
    connections: dict[str, Connection], request: bytes, rounds: int, batch: int
) -> list[tuple[float, float]]:
    for connection in connections.values():  # warm up: imports, caches, the thread pool
        await time_batch(connection, request, batch)
    pairs = []
    for round_number in range(rounds):
        order = ("before", "after") if round_number % 2 == 0 else ("after", "before")
        times = {name: await time_batch(connections[name], request, batch) for name in order}
        pairs.append((times["before"], times["after"]))
    for connection in connections.values():
        await connection.finish()
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="git revision to compare with")
    parser.add_argument("--app", default="app_v2.main", help="module of the app (its arm)")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--batch", type=int, default=100, help="requests per timed batch")
    parser.add_argument("--cpu", type=int, default=(os.cpu_count() or 1) - 1)
    arguments = parser.parse_args()
    os.sched_setaffinity(0, {arguments.cpu})
    asyncio.run(compare(arguments))


async def compare(arguments: argparse.Namespace) -> None:
    from commons.hardening.http_protocol import BoundedHttpToolsProtocol

    protocol_before = load_protocol_at(arguments.before).BoundedHttpToolsProtocol
    app_before, app_after = build_apps(arguments.app, arguments.before)
    loop = asyncio.get_running_loop()
    print(
        f"{arguments.app}, {arguments.rounds} pairs of {arguments.batch}-request batches, "
        f"CPU {arguments.cpu}; before = {arguments.before}"
    )
    for label, before, after in (
        ("protocol alone", (protocol_before, bare_app), (BoundedHttpToolsProtocol, bare_app)),
        ("whole request", (protocol_before, app_before), (BoundedHttpToolsProtocol, app_after)),
    ):
        for scenario, request in REQUESTS.items():
            connections = {
                "before": Connection(*before, loop),
                "after": Connection(*after, loop),
            }
            pairs = await measure(connections, request, arguments.rounds, arguments.batch)
            median_before, delta, spread, ratio = median_pairs(pairs)
            print(
                f"{label:<15} {scenario:<15} before {median_before:7.1f} µs/request, "
                f"after - before {delta:+6.2f} µs (IQR {spread:5.2f}), after / before {ratio:.4f}",
                flush=True,
            )
    # The WRITE path's other new cost, outside the protocol: reading published_at's text.
    from commons.input_rules import read_unix_seconds

    per_call = min(
        timeit.repeat(lambda: read_unix_seconds("2024-01-01T12:00:00Z"), number=100_000, repeat=5)
    )
    print(f"read_unix_seconds on an ISO date-time: {per_call / 100_000 * 1e6:.2f} µs a call")


if __name__ == "__main__":
    main()
