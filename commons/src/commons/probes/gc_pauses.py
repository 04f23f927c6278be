"""The latency mode's wrapper (`./test.sh latency`), served by uvicorn in the arm's own
environment: the app named by LAB_GC_APP (`module:attribute`), unchanged, plus a count of the
process's garbage collections and the time they stopped it, per generation, kept by a
`gc.callbacks` hook from start-up on.

`GET /lab-gc/pauses`, answered by the wrapper itself (the app never sees it) and only to a
client on the loopback interface (anyone else gets 404): the counts and pause time so far, and
the longest pause since the previous reading, as JSON. The
harness reads it before and after each window, outside the window, so a tail can be set beside
the collections that ran in it; the measured requests pay one string comparison each.
"""

import gc
import json
import os
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from commons.probes.targets import load

PAUSES_PATH = "/lab-gc/pauses"
LOOPBACK = ("127.0.0.1", "::1", "::ffff:127.0.0.1")  # the last: IPv4 on a dual-stack socket
Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]
Receive = Callable[[], Awaitable[Message]]


class PauseCounter:
    """Collections and their pauses (wall-clock, start to stop), per generation."""

    def __init__(self) -> None:
        self.collections = [0, 0, 0]
        self.pause_s = [0.0, 0.0, 0.0]
        self.longest_s = [0.0, 0.0, 0.0]
        self.started: float | None = None

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.started = time.perf_counter()
            return
        if self.started is None:  # a collection already running when the hook went in
            return
        pause = time.perf_counter() - self.started
        generation = info["generation"]
        self.collections[generation] += 1
        self.pause_s[generation] += pause
        self.longest_s[generation] = max(self.longest_s[generation], pause)
        self.started = None

    def reading(self) -> dict[str, Any]:
        """The counts so far; the longest pauses since the previous reading, which starts them
        again."""
        found = self.as_dict()
        self.longest_s = [0.0, 0.0, 0.0]
        return found

    def as_dict(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "generations": [
                {"collections": count, "pause_s": total, "longest_s": longest}
                for count, total, longest in zip(
                    self.collections, self.pause_s, self.longest_s, strict=True
                )
            ],
        }


pauses = PauseCounter()
# Served: the app it wraps, and the hook from here on. Imported by the harness for PAUSES_PATH:
# neither.
TARGET = os.environ.get("LAB_GC_APP")
inner = load(TARGET) if TARGET else None
if inner is not None:
    gc.callbacks.append(pauses)


async def answer(send: Send, status: int, body: bytes, content_type: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type), (b"content-length", b"%d" % len(body))],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] == "http" and scope["path"] == PAUSES_PATH:
        client = scope.get("client") or ("", 0)
        if client[0] not in LOOPBACK:
            await answer(send, 404, b'{"detail":"Not Found"}', b"application/json")
            return
        await answer(send, 200, json.dumps(pauses.reading()).encode(), b"application/json")
        return
    assert inner is not None, "LAB_GC_APP names the app to serve"
    await inner(scope, receive, send)
