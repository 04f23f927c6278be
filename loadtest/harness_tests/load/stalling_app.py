"""A test ASGI app for the open-loop generator's tests (test_open_loop.py), served by uvicorn:
it answers at once, except once, when armed, when it blocks its own event loop (a stop-the-world
pause, as a long collection or a CPU-bound handler would make), and it can tell when each
request reached it.

- `GET /` answers 200 `ok` at once. If a freeze is armed and due, the first request to reach
  it blocks the event loop with time.sleep() for the freeze's length first, then answers.
- `GET /arm?after_s=A&sleep_s=S` arms one freeze: the first request to `/` that arrives A
  seconds or more after this one blocks the loop for S seconds.
- `GET /record` answers 200 `ok` and notes its arrival (time.perf_counter(), this process's).
- `GET /recorded` answers the arrivals noted so far as a JSON list of seconds, and forgets them.
- anything else: 404.
"""

import json
import time
from typing import Any
from urllib.parse import parse_qs

OK = b"ok"
freeze: dict[str, float] = {}  # {"at": perf_counter time, "sleep_s": seconds} while armed
arrivals: list[float] = []


async def answer(send: Any, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    now = time.perf_counter()
    path = scope["path"]
    if path == "/":
        if freeze and now >= freeze["at"]:
            sleep_s = freeze.pop("sleep_s")
            freeze.clear()
            time.sleep(sleep_s)  # blocks the event loop: nothing else is read or answered
        await answer(send, 200, OK)
    elif path == "/arm":
        query = parse_qs(scope["query_string"].decode())
        freeze["at"] = now + float(query["after_s"][0])
        freeze["sleep_s"] = float(query["sleep_s"][0])
        await answer(send, 200, OK)
    elif path == "/record":
        arrivals.append(now)
        await answer(send, 200, OK)
    elif path == "/recorded":
        body = json.dumps(arrivals).encode()
        arrivals.clear()
        await answer(send, 200, body)
    else:
        await answer(send, 404, b"not found")
