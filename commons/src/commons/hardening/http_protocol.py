"""uvicorn's httptools protocol with bounds on what a client can make a server hold: a request's
head (its size and read time), its body (its read time, and how many are unfinished at once) and
the number of connections. Serve with
`uvicorn ... --http commons.hardening.http_protocol:BoundedHttpToolsProtocol`.

uvicorn's httptools parser takes a request line and headers of any size, and waits for them
forever: a 100 MB header was accepted after ~20 s, and 50 connections each holding an unfinished
4 MB header grew an app from ~86 to ~320 MiB and were never timed out. A body, once its head was
in, had no time limit at all: 300 connections each holding 1,040,000 bytes of a body declared
1,040,100 long grew an app from 89 to 407 MB for as long as the clients liked. So:

- a head over MAX_HEADER_BYTES (64 KiB) gets 431, one not complete within HEADER_TIMEOUT_SECONDS
  (10 s) gets 408. Only the head's own bytes count, wherever the reads split a pipelined stream;
- a body not complete within BODY_TIMEOUT_SECONDS (30 s) of its head gets 408;
- at most MAX_UNFINISHED_BODIES (64) bodies are received over several reads at once; the next
  one gets 503 with Retry-After, before it is read. A body is at most MAX_BODY_BYTES (1 MiB,
  commons/hardening/body_limit.py) in the app and 64 KiB more in uvicorn, so unfinished bodies
  hold at most about 64 x 1.1 MiB;
- past MAX_CONNECTIONS (1000) open connections, a new one is answered 503 with Retry-After and
  closed at once, so unfinished heads hold at most about 1000 x 64 KiB.

Each refusal closes the connection. The measured path (a request whose head and body arrive
in the read that completes them) pays a count per read, two flags per request and a sum over the
headers; the timers and counts are set only when a read ends inside an unfinished head or body.
"""

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from commons.config import ConfigurationError, HttpLimits, load_http_limits


def read_limits() -> HttpLimits:
    # The app itself refuses to start on a malformed setting (commons.application), with one
    # line; this module is imported before it, so it must not fail first with a traceback.
    try:
        return load_http_limits()
    except ConfigurationError:
        return HttpLimits()


LIMITS = read_limits()
RETRY_AFTER_S = 1  # a body slot or a connection frees as soon as one request is done


class HeadRefused(Exception):
    """Raised in a parser callback to stop parsing a head that is refused."""


class UnfinishedBodies:
    """How many request bodies this process is receiving over several reads (one event loop)."""

    count = 0


REASONS = {
    408: b"Request Timeout",
    431: b"Request Header Fields Too Large",
    503: b"Service Unavailable",
}
BUSY_HEADERS = b"retry-after: %d\r\n" % RETRY_AFTER_S


def answer(status: int, detail: bytes, extra_headers: bytes = b"") -> bytes:
    body = b'{"detail":"%s"}' % detail
    return (
        b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        b"%sconnection: close\r\n\r\n%s" % (status, REASONS[status], len(body), extra_headers, body)
    )


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.in_head = True  # between a message's first byte (or the connection's) and its headers
        self.head_bytes = 0
        self.head_begun_in_read = False  # the head began after another message, inside one read
        self.head_timer: asyncio.TimerHandle | None = None
        self.refusal: tuple[int, bytes] | None = None
        self.read_size = 0  # of the read being parsed
        self.in_body = False  # between a message's headers and its end
        self.body_counted = False  # this connection's body is one of the UnfinishedBodies
        self.body_timer: asyncio.TimerHandle | None = None
        self.last_body_chunk = b""  # in the read being parsed: where a body ended

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > LIMITS.max_connections:
            # Refused before anything is read: an unfinished head it sent would be memory too.
            detail = b"Too many connections (MAX_CONNECTIONS); retry later"
            self.transport.write(answer(503, detail, BUSY_HEADERS))
            self.transport.close()
            return
        # A connection that never sends a byte is a head that never completes, too.
        self.start_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self.cancel_head_timer()
        self.end_unfinished_body()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.read_size = len(data)
        self.last_body_chunk = b""
        if self.in_head:
            self.head_bytes += len(data)
        super().data_received(data)  # may complete a head, a message, and begin the next
        if self.transport.is_closing():
            return
        if self.in_head:
            if self.head_begun_in_read:
                self.head_begun_in_read = False
                self.head_bytes = self.own_bytes_of_head_begun_in(data)
            # head_bytes is 0 when the last message completed in this read and no other began.
            if self.head_bytes > LIMITS.max_header_bytes:
                self.refuse(431, self.too_large_detail())
            elif self.head_bytes and self.head_timer is None:
                self.start_head_timer()
        elif self.in_body and not self.body_counted and not self.pipeline:
            # A body split over reads, of the request being answered (a pipelined one waits,
            # its reading paused by uvicorn, until the requests before it are answered).
            self.begin_unfinished_body()

    def own_bytes_of_head_begun_in(self, data: bytes) -> int:
        """The bytes of the unfinished head at the end of `data` that began inside it, after the
        end of an earlier message: its own bytes only (counting the whole read gave pipelined
        requests a false 431). The head holds no blank line yet (the parser accepts CRLF only),
        and the message before it ended either with one (its head, or a chunked body's last
        chunk) or with the last chunk of its body, which is where this head starts. If that
        chunk's text comes again inside the head, the count is short, never long."""
        start = data.rfind(b"\r\n\r\n") + 4 if b"\r\n\r\n" in data else 0
        if self.last_body_chunk:
            start = max(start, data.rfind(self.last_body_chunk) + len(self.last_body_chunk))
        return len(data) - start

    def on_headers_complete(self) -> None:
        self.in_head = False
        if self.head_timer is not None:
            self.cancel_head_timer()
        # A head that arrived whole in one read was not refused by data_received. The reads
        # holding it bound its size: only when they exceed the limit (a large body in the same
        # read, say) is the head itself measured, so the usual request pays nothing for it.
        reads = self.read_size if self.head_begun_in_read else self.head_bytes
        self.head_begun_in_read = False
        if reads > LIMITS.max_header_bytes and self.parsed_head_size() > LIMITS.max_header_bytes:
            self.refusal = (431, self.too_large_detail())
            raise HeadRefused  # stops the parser; uvicorn answers through send_400_response
        self.in_body = True
        super().on_headers_complete()

    def parsed_head_size(self) -> int:
        """No more than the head's bytes as sent: its request line and header lines, counted
        with the least spacing the parser accepts."""
        request_line = len(self.parser.get_method()) + len(self.url) + len(b"  HTTP/1.1\r\n")
        headers = sum(len(name) + len(value) + len(b":\r\n") for name, value in self.headers)
        return request_line + headers + len(b"\r\n")

    def on_body(self, body: bytes) -> None:
        self.last_body_chunk = body
        super().on_body(body)

    def on_message_complete(self) -> None:
        self.in_body = False
        self.end_unfinished_body()
        super().on_message_complete()
        # The next request's head begins with the next byte on this connection.
        self.in_head = True
        self.head_bytes = 0

    def on_response_complete(self) -> None:
        super().on_response_complete()  # starts the next pipelined request, if one waits
        if self.refusal is not None and not self.transport.is_closing():
            self.refuse(*self.refusal)
        elif self.in_body and not self.body_counted and not self.pipeline:
            if not self.transport.is_closing():
                self.begin_unfinished_body()  # the request now answered was waiting for it

    def send_400_response(self, msg: str) -> None:
        if self.refusal is not None:
            self.refuse(*self.refusal)
        else:
            super().send_400_response(msg)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        # Begun inside a read that also ended the previous message (pipelining): its own bytes
        # in that read are counted once the read is parsed (data_received).
        self.head_begun_in_read = self.head_bytes == 0

    def too_large_detail(self) -> bytes:
        return b"Request line and headers over %d bytes (MAX_HEADER_BYTES)" % (
            LIMITS.max_header_bytes
        )

    def start_head_timer(self) -> None:
        self.head_timer = self.loop.call_later(LIMITS.header_timeout_s, self.head_timed_out)

    def cancel_head_timer(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def head_timed_out(self) -> None:
        self.head_timer = None
        if not self.in_head or self.transport.is_closing():
            return
        if self.head_bytes == 0:
            self.transport.close()  # nothing was asked: nothing to answer
            return
        self.refuse(
            408,
            b"Request line and headers not received within %g s "
            b"(HEADER_TIMEOUT_SECONDS)" % LIMITS.header_timeout_s,
        )

    def begin_unfinished_body(self) -> None:
        if self.transport.get_protocol() is not self:
            return  # upgraded to a WebSocket: that protocol has the connection now
        if UnfinishedBodies.count >= LIMITS.max_unfinished_bodies:
            detail = b"Too many request bodies being received (MAX_UNFINISHED_BODIES); retry later"
            self.refuse_body(503, detail, BUSY_HEADERS)
            return
        UnfinishedBodies.count += 1
        self.body_counted = True
        self.body_timer = self.loop.call_later(LIMITS.body_timeout_s, self.body_timed_out)

    def end_unfinished_body(self) -> None:
        if self.body_counted:
            UnfinishedBodies.count -= 1
            self.body_counted = False
        if self.body_timer is not None:
            self.body_timer.cancel()
            self.body_timer = None

    def body_timed_out(self) -> None:
        self.body_timer = None
        if self.in_body and not self.transport.is_closing():
            detail = b"Request body not received within %g s of its head (BODY_TIMEOUT_SECONDS)"
            self.refuse_body(408, detail % LIMITS.body_timeout_s)

    def refuse_body(self, status: int, detail: bytes, extra_headers: bytes = b"") -> None:
        """Answer the request whose body is being received (when the app has not answered it
        already), and close. The app, perhaps still reading the body, is told the client left,
        as connection_lost would tell it: it stops, and lets go of what it read."""
        self.end_unfinished_body()
        cycle = self.cycle
        if not cycle.response_started:
            self.transport.write(answer(status, detail, extra_headers))
        if not cycle.response_complete:
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()

    def refuse(self, status: int, detail: bytes) -> None:
        self.cancel_head_timer()
        if self.cycle is not None and not self.cycle.response_complete:
            # A pipelined head went wrong while the previous request is still being answered:
            # let that answer finish, then refuse and close (on_response_complete).
            # (It stays keep-alive until then: uvicorn would close before on_response_complete.)
            self.refusal = (status, detail)
            self.flow.pause_reading()
            return
        self.transport.write(answer(status, detail))
        self.transport.close()
