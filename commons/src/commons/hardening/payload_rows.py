"""How much the payload routes build and send at once: a budget of rows (posts, and their
comments) in flight, taken before a route runs and given back once its answer has left the
process. A pure ASGI middleware on GET /payloads/...

Forty parallel `GET /payloads/nested?items=5000&comments=10` (55,000 rows, ~9 MB of JSON each)
grew v1 to 856 MiB and took 79 s; sixty that were never read grew v2 to 779 MiB. The rows an
answer holds are known from its query before anything is built, so a request waits (on the
event loop, holding nothing) while the rows in flight and its own would pass MAX_PAYLOAD_ROWS,
and gets 503 with Retry-After after PAYLOAD_WAIT_SECONDS. One request is always let in, however
large, so every valid request can be answered. The budget is held until the answer's last bytes
are in the kernel's hands (the protocol's send buffer drained, commons/hardening/
http_protocol.py), so a client slow to read holds its rows, not someone else's.

The sweep's largest cells send 2 requests at a time (its timetable's MIN_USERS): 110,000 rows
at most, with 10 comments a post, which the default budget admits at once.
"""

import asyncio
from urllib.parse import parse_qsl

from commons.hardening.asgi import ASGIApp, Message, Receive, Send, send_json
from commons.payloads import (
    DEFAULT_COMMENTS_PER_POST,
    DEFAULT_PAYLOAD_ITEMS,
    MAX_COMMENTS_PER_POST,
    MAX_PAYLOAD_ITEMS,
)

PAYLOADS_PATH = "/payloads/"
RETRY_AFTER = (b"retry-after", b"1")
BUSY_BODY = b'{"detail":"Too many payload rows being answered (MAX_PAYLOAD_ROWS); retry later"}'


def answer_rows(path: str, query_string: bytes) -> int:
    """The rows the answer to this request holds: its posts, and for the nested shape their
    comments too. An invalid parameter counts as its default (FastAPI answers 422)."""
    query = dict(parse_qsl(query_string.decode("latin-1")))
    items = read_count(query.get("items"), DEFAULT_PAYLOAD_ITEMS, MAX_PAYLOAD_ITEMS)
    if path.endswith("/nested"):
        comments = read_count(
            query.get("comments"), DEFAULT_COMMENTS_PER_POST, MAX_COMMENTS_PER_POST
        )
        return items * (1 + comments)
    return items


def read_count(raw: str | None, default: int, most: int) -> int:
    if raw is None or not raw.isascii() or not raw.isdigit():
        return default
    return min(int(raw), most)


class PayloadRows:
    """The rows in flight, and the requests waiting for room (one event loop)."""

    def __init__(self, budget: int, wait_s: float) -> None:
        self.budget = budget
        self.wait_s = wait_s
        self.in_flight = 0
        self._room = asyncio.Condition()

    def fits(self, rows: int) -> bool:
        return self.in_flight == 0 or self.in_flight + rows <= self.budget

    async def take(self, rows: int) -> bool:
        if self.fits(rows):  # room now: taken at once, no timer to set up
            self.in_flight += rows
            return True
        try:
            async with asyncio.timeout(self.wait_s), self._room:
                await self._room.wait_for(lambda: self.fits(rows))
                self.in_flight += rows
                return True
        except TimeoutError:
            return False

    async def give_back(self, rows: int) -> None:
        self.in_flight -= rows
        async with self._room:
            self._room.notify_all()


class PayloadRowsMiddleware:
    def __init__(self, app: ASGIApp, rows: PayloadRows) -> None:
        self.app = app
        self.rows = rows

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "GET"
            or not scope["path"].startswith(PAYLOADS_PATH)
        ):
            await self.app(scope, receive, send)
            return
        rows = answer_rows(scope["path"], scope["query_string"])
        if not await self.rows.take(rows):
            await send_json(send, 503, BUSY_BODY, headers=(RETRY_AFTER,))
            return

        async def send_until_it_has_left(message: Message) -> None:
            if message["type"] != "http.response.body" or message.get("more_body", False):
                await send(message)
                return
            # The answer, then an empty end: uvicorn sends the end only once its send buffer
            # has drained (or the client is gone), so the rows are given back after that.
            await send({**message, "more_body": True})
            await send({"type": "http.response.body", "body": b""})

        try:
            await self.app(scope, receive, send_until_it_has_left)
        finally:
            await self.rows.give_back(rows)
