"""The workers mode's wrapper (`./test.sh workers`), served by uvicorn `--workers N` or gunicorn
in the arm's own environment: the app named by LAB_WORKERS_APP (`module:attribute`), unchanged,
plus what the harness reads of each worker and never asks the app itself:

- every HTTP response carries the PID of the worker that served it, in `x-lab-worker-pid`, so the
  harness can prove that every worker served every route (the listening socket is shared, and the
  kernel hands connections to workers unevenly);
- each worker, once its lifespan has started (it serves from then on), writes
  `<LAB_WORKERS_READY_DIR>/<pid>` holding the wall-clock time it was ready: the harness counts
  the workers that were ever ready (a restarted worker is one more) and when the last one was.

`GET /lab-workers/collect`, answered by the wrapper itself (the app never sees it): a full
garbage collection in the worker that takes it. A worker's collector runs its oldest generation
now and then under traffic, and that collection writes to every object it tracks, so the pages
a preloaded app shared with its master come unshared (unless gc.freeze() moved them out of the
collector's reach): the harness asks every worker for one to measure that state now rather than
after minutes of traffic.

`after_fork()` is what a preloaded app does in each child (gunicorn's `post_fork`,
gunicorn_config.py): forget the database connections it inherited from the master without
closing them (the master's socket is the same file), so no two processes share one.
"""

import gc
import os
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from commons.probes.targets import load

PID_HEADER = b"x-lab-worker-pid"
COLLECT_PATH = "/lab-workers/collect"
Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]
Receive = Callable[[], Awaitable[Message]]


inner = load(os.environ["LAB_WORKERS_APP"])
READY_DIR = Path(os.environ["LAB_WORKERS_READY_DIR"])


def mark_ready() -> None:
    """Write this worker's ready time, whole or not at all (the harness polls the folder)."""
    pid = os.getpid()
    partial = READY_DIR / f".{pid}.partial"
    partial.write_text(f"{time.time():.6f}\n")
    partial.rename(READY_DIR / str(pid))


def after_fork() -> None:
    engine = getattr(getattr(inner, "state", None), "engine", None)
    if engine is not None:
        engine.dispose(close=False)


async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":

        async def send_marking_ready(message: Message) -> None:
            if message["type"] == "lifespan.startup.complete":
                mark_ready()
            await send(message)

        await inner(scope, receive, send_marking_ready)
    elif scope["type"] == "http":
        pid = str(os.getpid()).encode()
        if scope["path"] == COLLECT_PATH:
            collected = gc.collect()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/plain"), (PID_HEADER, pid)],
                }
            )
            await send({"type": "http.response.body", "body": f"{collected}\n".encode()})
            return

        async def send_with_pid(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), (PID_HEADER, pid)]}
            await send(message)

        await inner(scope, receive, send_with_pid)
    else:
        await inner(scope, receive, send)
