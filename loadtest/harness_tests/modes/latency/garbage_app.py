"""A test ASGI app served inside the garbage-collection probe (test_gc_probe.py):

- `GET /garbage` makes reference cycles (automatic collections off meanwhile, so they all
  wait for it) and collects them with a full collection (generation 2), then answers 200 with
  how many objects that collection found unreachable;
- `POST /echo` answers 201 with the request's body and a header of its own;
- `GET /hello` answers 200 `hello` with a header of its own;
- anything else (the probe's neighbouring paths included): its own 404, `no such path here`.
"""

import gc
from typing import Any

CYCLES = 10_000


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def make_cycles(count: int) -> None:
    for _ in range(count):
        first, second = Node(), Node()
        first.other, second.other = second, first


async def answer(send: Any, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain"),
                (b"content-length", str(len(body)).encode()),
                (b"x-garbage-app", b"yes"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def read_body(receive: Any) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return body


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    path, method = scope["path"], scope["method"]
    if path == "/garbage" and method == "GET":
        enabled = gc.isenabled()
        gc.disable()
        try:
            make_cycles(CYCLES)
            found = gc.collect()
        finally:
            if enabled:
                gc.enable()
        await answer(send, 200, str(found).encode())
    elif path == "/echo" and method == "POST":
        await answer(send, 201, await read_body(receive))
    elif path == "/hello" and method == "GET":
        await answer(send, 200, b"hello")
    else:
        await answer(send, 404, b"no such path here")
