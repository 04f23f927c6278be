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
http_protocol.py): given back as soon as the answer was handed to the connection, forty honest
readers of the largest answer each had theirs built at once, and past MAX_WAITING_ANSWER_BYTES
the protocol abandoned answers whose clients were reading. The price: a client reading at
just over MIN_SEND_BYTES_PER_SECOND holds its rows for as long (the largest answer, 19 minutes),
so two such clients turn every other payload request away with 503 meanwhile; memory stays
bounded, and the posts routes are untouched (docs/operations.md says so).

The sweep's largest cells send 2 requests at a time (its timetable's MIN_USERS): 110,000 rows
at most, with 10 comments a post, which the default budget admits at once.

A second, smaller budget bounds the event loop's work (issue 53): the rows being *built*, from
admission until the answer's first bytes go out (MAX_BUILDING_ROWS). On Pydantic 1, FastAPI
serialises an answer on the event loop (jsonable_encoder, then json.dumps): about 0.23 s for
5,000 posts on a 2-vCPU VM, against 0.05 s on Pydantic 2, and the 22 such answers the rows
budget admits at once ran back to back, holding /health for 5-6 s. 5,000 rows building at once
(one 5,000-post answer) hold the loop for about 0.16-0.23 s in the Pydantic 1 arms; a comment
costs about half a post's loop time, so the rows weigh a nested answer on the safe side
(docs/operations.md has the figures). At 10,000, /health still reached 0.96 s.
Released once the answer starts, this budget is not held while a slow client reads. One request
is always let in here too, however large.
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
# An answer this small leaves at once: the kernel takes it whole (its send buffer is
# SEND_BUFFER_BYTES, allocated twice over), and the protocol's buffer pauses only past 64 KiB.
# A larger one is followed by an empty end that waits for it to leave (below), at a cost of
# ~9 µs a request, 2% of a 100-post answer, which the sweep measures.
LEAVES_AT_ONCE_BYTES = 64 * 1024
RETRY_AFTER = (b"retry-after", b"1")
BUSY_BODY = b'{"detail":"Too many payload rows being answered (MAX_PAYLOAD_ROWS); retry later"}'
BUILDING_BODY = b'{"detail":"Too many payload rows being built (MAX_BUILDING_ROWS); retry later"}'


def answer_rows(path: str, query_string: bytes) -> int:
    """The rows the answer to this request holds: its posts, and for the nested shape their
    comments too, read as FastAPI reads them (the last of a repeated name). A parameter that is
    not ASCII digits counts as its default: FastAPI answers 422 (AsciiIntegersRoute).
    A plain query is read by hand: urllib's parse_qsl cost ~2 µs a request, 0.5% of a 100-post
    answer; one with escapes (`%35000` is 5000) is decoded as Starlette decodes it."""
    items: bytes | str | None = None
    comments: bytes | str | None = None
    if b"%" in query_string or b"+" in query_string:
        # Names and values may decode to any character (a name is not always Latin-1).
        query = dict(parse_qsl(query_string.decode("latin-1"), keep_blank_values=True))
        items, comments = query.get("items"), query.get("comments")
    else:
        for pair in query_string.split(b"&"):
            name, _, value = pair.partition(b"=")
            if name == b"items":
                items = value
            elif name == b"comments":
                comments = value
    posts = read_count(items, DEFAULT_PAYLOAD_ITEMS, MAX_PAYLOAD_ITEMS)
    if path.endswith("/nested"):
        return posts * (1 + read_count(comments, DEFAULT_COMMENTS_PER_POST, MAX_COMMENTS_PER_POST))
    return posts


def read_count(raw: bytes | str | None, default: int, most: int) -> int:
    if raw is None or not raw.isascii() or not raw.isdigit():
        return default
    return min(int(raw), most)


class PayloadRows:
    """The rows in flight, and the requests waiting for room (one event loop)."""

    def __init__(self, budget: int, wait_s: float) -> None:
        self.budget = budget
        self.wait_s = wait_s
        self.in_flight = 0
        self._waiters: list[asyncio.Future[None]] = []

    def take_now(self, rows: int) -> bool:
        """Take the rows if they fit (or nothing else is in flight): the usual path, no await."""
        if self.in_flight == 0 or self.in_flight + rows <= self.budget:
            self.in_flight += rows
            return True
        return False

    async def take(self, rows: int, deadline: float | None = None) -> bool:
        """Take the rows, waiting for room until `deadline` (the loop's clock; wait_s from now
        if not given); False if none came."""
        loop = asyncio.get_running_loop()
        if deadline is None:
            deadline = loop.time() + self.wait_s
        while not self.take_now(rows):
            waiter = loop.create_future()
            self._waiters.append(waiter)
            try:
                async with asyncio.timeout_at(deadline):
                    await waiter
            except TimeoutError:
                return False
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        return True

    def give_back(self, rows: int) -> None:
        self.in_flight -= rows
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:  # each looks again whether it fits now
            if not waiter.done():
                waiter.set_result(None)


class PayloadRowsMiddleware:
    def __init__(self, app: ASGIApp, rows: PayloadRows, building: PayloadRows) -> None:
        self.app = app
        self.rows = rows
        self.building = building  # the same kind of budget, over the rows being built

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "GET"
            or not scope["path"].startswith(PAYLOADS_PATH)
        ):
            await self.app(scope, receive, send)
            return
        rows = answer_rows(scope["path"], scope["query_string"])
        deadline = asyncio.get_running_loop().time() + self.rows.wait_s
        if not self.rows.take_now(rows) and not await self.rows.take(rows, deadline):
            await send_json(send, 503, BUSY_BODY, headers=(RETRY_AFTER,))
            return
        try:
            building = self.building.take_now(rows) or await self.building.take(rows, deadline)
        except BaseException:  # cancelled while waiting: the rows go back all the same
            self.rows.give_back(rows)
            raise
        if not building:
            self.rows.give_back(rows)
            await send_json(send, 503, BUILDING_BODY, headers=(RETRY_AFTER,))
            return
        built = False

        def done_building() -> None:
            nonlocal built
            if not built:
                built = True
                self.building.give_back(rows)

        async def send_until_it_has_left(message: Message) -> None:
            if message["type"] == "http.response.start":
                done_building()  # serialised: the loop's part of the work is over
            if (
                message["type"] != "http.response.body"
                or message.get("more_body", False)
                or len(message.get("body", b"")) <= LEAVES_AT_ONCE_BYTES
            ):
                await send(message)
                return
            # The answer, then an empty end: uvicorn sends the end only once its send buffer
            # has drained (or the client is gone), so the rows are given back after that.
            await send({**message, "more_body": True})
            await send({"type": "http.response.body", "body": b""})

        try:
            await self.app(scope, receive, send_until_it_has_left)
        finally:
            done_building()
            self.rows.give_back(rows)
