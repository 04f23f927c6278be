"""uvicorn's httptools protocol with bounds on what a client can make a server hold: a request's
head (its size and read time), its body (its read time and rate, and the bytes of all unfinished
bodies), the answers waiting on clients that do not read them (their rate, and their bytes), the
kernel's buffers of each connection, and the number of connections. Serve with
`uvicorn ... --http commons.hardening.http_protocol:BoundedHttpToolsProtocol`.

uvicorn's httptools parser takes a request line and headers of any size, and waits for them
forever; a body, once its head was in, had no time limit; an answer waits in the send buffer for
as long as the client does not read it (sixty clients that never read a 9 MB answer grew an app
from 80 to 779 MiB, with the kernel holding up to 4 MiB more per connection). So (the settings
in commons/config.py, HttpLimits; docs/operations.md states each with what it bounds):

- a head over MAX_HEADER_BYTES gets 431, one not complete within HEADER_TIMEOUT_SECONDS gets 408.
  Only the head's own bytes count, wherever the reads split a pipelined stream;
- a body not complete within BODY_TIMEOUT_SECONDS of its head, or unfinished at the end of a
  window of RATE_WINDOW_SECONDS that brought fewer than MIN_UPLOAD_BYTES_PER_SECOND, gets 408;
  the bytes of all bodies received over several reads, until they are answered, are at most
  MAX_BODY_BYTES_IN_FLIGHT, and a body whose next read would pass it gets 503 with
  Retry-After (a body that arrives in one read holds at most twice RECEIVE_BUFFER_BYTES);
- an answer the client takes fewer than MIN_SEND_BYTES_PER_SECOND of over a whole window while
  it waits is abandoned and its connection closed; the answers waiting on clients hold at most
  about MAX_WAITING_ANSWER_BYTES: past it, the longest-waiting one is abandoned;
- the kernel holds at most SEND_BUFFER_BYTES and RECEIVE_BUFFER_BYTES (each doubled by Linux) of
  a connection: without them it grew a send buffer to 4 MiB and a receive buffer to 32 MiB;
- past MAX_CONNECTIONS open connections, a new one closes the oldest idle one (asked nothing
  yet, or between requests), or, with none idle, is answered 503 with Retry-After.

Each refusal closes the connection with a lingering close: the answer is sent, the sending side
shut, and what the client still sends is read and dropped for at most LINGER_SECONDS, so a
client still sending reads the answer instead of a reset. The measured path (a request whose
head and body arrive in the read that completes them, an answer the kernel takes at once) pays
a count per read, two flags per request, a sum over the headers and two dictionary operations;
the timers and counts are set only when a read ends inside an unfinished head or body, or an
answer waits on its client.
"""

import asyncio
import socket
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from commons.config import (
    RECEIVE_BUFFER_BYTES,
    SEND_BUFFER_BYTES,
    ConfigurationError,
    HttpLimits,
    load_http_limits,
)


def read_limits() -> HttpLimits:
    # The app itself refuses to start on a malformed setting (commons.application), with one
    # line; this module is imported before it, so it must not fail first with a traceback.
    try:
        return load_http_limits()
    except ConfigurationError:
        return HttpLimits()


LIMITS = read_limits()
RETRY_AFTER_S = 1  # a body's bytes, a connection or an answer's room free within a request
# How long, and how much, of a refused client's further bytes are read and dropped: enough for
# the rest of the largest body (MAX_BODY_BYTES, 1 MiB by default, and uvicorn's 64 KiB), not a
# 100 MB header.
LINGER_SECONDS = 2.0
LINGER_BYTES = 1024 * 1024 + 64 * 1024
# At most this many refused connections linger at once; past it a refusal is sent and the
# connection closed at once (lingering ones count as open: a flood must not pile them up).
MAX_LINGERING = 64
# A body that has been arriving for this long at under MIN_UPLOAD_BYTES_PER_SECOND may be
# refused to make room for a new connection: an honest one is sent in a burst after its head.
EVICTABLE_AFTER_S = 1.0


class HeadRefused(Exception):
    """Raised in a parser callback to stop parsing a head that is refused."""


class Held:
    """What this process holds for all its connections (one event loop)."""

    body_bytes_in_flight = 0
    # Connections that asked nothing yet or are between requests, oldest first: the ones a
    # new connection past MAX_CONNECTIONS may close.
    idle: dict["BoundedHttpToolsProtocol", None] = {}
    # Connections whose answer waits on the client, longest-waiting first, with the bytes
    # waiting when last looked at.
    waiting_answers: dict["BoundedHttpToolsProtocol", int] = {}
    # Connections receiving a body over several reads.
    arriving_bodies: dict["BoundedHttpToolsProtocol", None] = {}
    lingering = 0  # refused connections reading and dropping what their clients still send


REASONS = {
    408: b"Request Timeout",
    431: b"Request Header Fields Too Large",
    503: b"Service Unavailable",
}
BUSY_HEADERS = b"retry-after: %d\r\n" % RETRY_AFTER_S
TOO_MANY_BODY_BYTES = (
    b"Too many request body bytes being received (MAX_BODY_BYTES_IN_FLIGHT); retry later"
)


def answer(status: int, detail: bytes, extra_headers: bytes = b"") -> bytes:
    body = b'{"detail":"%s"}' % detail
    return (
        b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        b"%sconnection: close\r\n\r\n%s" % (status, REASONS[status], len(body), extra_headers, body)
    )


def bound_kernel_buffers(transport: asyncio.Transport) -> None:
    connection = transport.get_extra_info("socket")
    if connection is None or connection.family not in (socket.AF_INET, socket.AF_INET6):
        return  # a unix socket, or a test's transport: no TCP buffers to bound
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER_BYTES)


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
        self.body_counted = False  # this connection's body bytes are in Held's count
        self.body_bytes = 0  # of the body received over several reads, counted until answered
        self.body_window_start = 0  # body_bytes when the rate window began
        self.body_started = 0.0  # when it began to be counted (the event loop's clock)
        self.body_timer: asyncio.TimerHandle | None = None
        self.body_rate_timer: asyncio.TimerHandle | None = None
        self.last_body_chunk = b""  # in the read being parsed: where a body ended
        self.send_timer: asyncio.TimerHandle | None = None
        self.send_window_start = 0  # bytes waiting when the send window began
        self.lingering = False
        self.linger_left = LINGER_BYTES

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        bound_kernel_buffers(transport)
        if len(self.connections) > LIMITS.max_connections and not self.close_oldest_idle():
            # Refused before anything is read: an unfinished head it sent would be memory too.
            detail = b"Too many connections (MAX_CONNECTIONS) busy with requests; retry later"
            self.close_lingering(answer(503, detail, BUSY_HEADERS))
            return
        Held.idle[self] = None
        # A connection that never sends a byte is a head that never completes, too.
        self.start_head_timer()

    def close_oldest_idle(self) -> bool:
        """Make room: close the connection idle the longest (it asked nothing, or its last
        answer has left), as a keep-alive time-out would; with none, refuse the body arriving
        slowest since its head, if that is slower than MIN_UPLOAD_BYTES_PER_SECOND. Otherwise a
        few cheap connections, each sending a head and a few bytes of a body, could hold every
        connection for a window at a time. False when every connection is busy otherwise."""
        for connection in Held.idle:
            if connection is not self and not connection.transport.get_write_buffer_size():
                connection.forget()
                connection.transport.close()
                return True
        now = self.loop.time()
        slow = [
            body
            for body in Held.arriving_bodies
            if now - body.body_started >= EVICTABLE_AFTER_S and not body.transport.is_closing()
        ]
        slowest = min(slow, key=lambda body: body.upload_rate(now), default=None)
        if slowest is None or slowest.upload_rate(now) >= LIMITS.min_upload_rate:
            return False
        slowest.refuse_body(408, slowest.too_slow_detail())
        return True

    def close_now(self) -> None:
        """Close. What is still waiting on the client stays timed: a plain close waits for a
        client that may never read it, holding the connection and its bytes; a client that
        does not take it at MIN_SEND_BYTES_PER_SECOND has it abandoned."""
        self.stop_requests()
        self.stop_lingering()
        if self.transport.get_write_buffer_size():
            self.watch_waiting_answer()
        self.transport.close()

    def timeout_keep_alive_handler(self) -> None:
        if not self.transport.is_closing():
            self.close_now()

    def forget(self) -> None:
        """Take this connection out of every count and timer (it is closing)."""
        self.stop_requests()
        self.stop_waiting_answer()
        self.stop_lingering()

    def stop_lingering(self) -> None:
        if self.lingering:
            self.lingering = False
            Held.lingering -= 1

    def stop_requests(self) -> None:
        """Take this connection out of the counts and timers of what it receives."""
        Held.idle.pop(self, None)
        self.cancel_head_timer()
        self.end_unfinished_body()
        self.release_body_bytes()

    def connection_lost(self, exc: Exception | None) -> None:
        self.forget()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.lingering:
            # Read, and dropped: the client sees its answer, not a reset (but for a client
            # that goes on sending more than any body could be).
            self.linger_left -= len(data)
            if self.linger_left < 0:
                self.abandon_answer()
            return
        self.read_size = len(data)
        self.last_body_chunk = b""
        if self.in_head:
            self.head_bytes += len(data)
        elif self.body_counted:
            others = Held.body_bytes_in_flight - self.body_bytes
            if others and Held.body_bytes_in_flight + len(data) > LIMITS.max_body_bytes_in_flight:
                self.refuse_body(503, TOO_MANY_BODY_BYTES, BUSY_HEADERS)
                return
            self.body_bytes += len(data)
            Held.body_bytes_in_flight += len(data)
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
        Held.idle.pop(self, None)  # busy with a request until it is answered
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
        self.release_body_bytes()
        # An answer still waiting on the client is timed even under the high-water mark (and
        # when uvicorn is closing the connection, which would wait for it for ever).
        if self.transport.get_write_buffer_size():
            self.watch_waiting_answer()
        super().on_response_complete()  # starts the next pipelined request, if one waits
        if self.transport.is_closing():
            return
        if self.refusal is not None:
            self.refuse(*self.refusal)
        elif self.in_body and not self.body_counted and not self.pipeline:
            self.begin_unfinished_body()  # the request now answered was waiting for it
        elif self.in_head and not self.pipeline and self.cycle.response_complete:
            Held.idle[self] = None  # between requests (its answer may still be leaving)

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
            self.close_now()  # nothing was asked: nothing to answer
            return
        self.refuse(
            408,
            b"Request line and headers not received within %g s "
            b"(HEADER_TIMEOUT_SECONDS)" % LIMITS.header_timeout_s,
        )

    # Bodies received over several reads: their time, their rate and their bytes.

    def begin_unfinished_body(self) -> None:
        if self.transport.get_protocol() is not self:
            return  # upgraded to a WebSocket: that protocol has the connection now
        # What this read brought of the body (uvicorn keeps it until the app reads it).
        self.body_bytes = len(self.cycle.body) if self.cycle is not None else 0
        if Held.body_bytes_in_flight + self.body_bytes > LIMITS.max_body_bytes_in_flight:
            self.body_bytes = 0
            self.refuse_body(503, TOO_MANY_BODY_BYTES, BUSY_HEADERS)
            return
        Held.body_bytes_in_flight += self.body_bytes
        Held.arriving_bodies[self] = None
        self.body_counted = True
        self.body_started = self.loop.time()
        self.body_window_start = self.body_bytes
        self.body_timer = self.loop.call_later(LIMITS.body_timeout_s, self.body_timed_out)
        self.body_rate_timer = self.loop.call_later(LIMITS.rate_window_s, self.check_body_rate)

    def end_unfinished_body(self) -> None:
        """The body has arrived (or never will): its timers stop. Its bytes stay counted until
        it is answered (release_body_bytes): a whole body waiting for a database slot is
        memory too."""
        Held.arriving_bodies.pop(self, None)
        for timer in (self.body_timer, self.body_rate_timer):
            if timer is not None:
                timer.cancel()
        self.body_timer = self.body_rate_timer = None

    def release_body_bytes(self) -> None:
        if self.body_counted:
            Held.body_bytes_in_flight -= self.body_bytes
            self.body_counted = False
            self.body_bytes = 0

    def body_timed_out(self) -> None:
        self.body_timer = None
        if self.in_body and not self.transport.is_closing():
            detail = b"Request body not received within %g s of its head (BODY_TIMEOUT_SECONDS)"
            self.refuse_body(408, detail % LIMITS.body_timeout_s)

    def check_body_rate(self) -> None:
        self.body_rate_timer = None
        if not self.in_body or self.transport.is_closing():
            return
        arrived = self.body_bytes - self.body_window_start
        if arrived < LIMITS.min_upload_rate * LIMITS.rate_window_s:
            self.refuse_body(408, self.too_slow_detail())
            return
        self.body_window_start = self.body_bytes
        self.body_rate_timer = self.loop.call_later(LIMITS.rate_window_s, self.check_body_rate)

    def upload_rate(self, now: float) -> float:
        """Bytes a second since the body began to be counted (a body that has not had a whole
        window yet may be slower than the rate at first: its first read came with its head)."""
        return self.body_bytes / max(now - self.body_started, 1e-3)

    def too_slow_detail(self) -> bytes:
        return (
            b"Request body arriving slower than %d bytes a second "
            b"(MIN_UPLOAD_BYTES_PER_SECOND)" % LIMITS.min_upload_rate
        )

    def refuse_body(self, status: int, detail: bytes, extra_headers: bytes = b"") -> None:
        """Answer the request whose body is being received (when the app has not answered it
        already), and close. The app, perhaps still reading the body, is told the client left,
        as connection_lost would tell it: it stops, and lets go of what it read."""
        self.end_unfinished_body()
        self.release_body_bytes()
        cycle = self.cycle
        cycle.waiting_for_100_continue = False  # nothing more is to be sent to it
        if not cycle.response_complete:
            cycle.disconnected = True
            cycle.message_event.set()
        if not cycle.response_started:
            self.close_lingering(answer(status, detail, extra_headers))
        else:
            self.close_now()

    # Answers waiting on the client: their rate, and their bytes all together.

    def pause_writing(self) -> None:
        """The transport's buffer went over its high-water mark: the client is not taking the
        answer as fast as it is written (the kernel's buffer is full too)."""
        super().pause_writing()
        self.watch_waiting_answer()

    def watch_waiting_answer(self) -> None:
        if self.send_timer is None:
            waiting = self.transport.get_write_buffer_size()
            self.send_window_start = waiting
            Held.waiting_answers[self] = waiting
            self.send_timer = self.loop.call_later(LIMITS.rate_window_s, self.check_send_rate)
            self.keep_waiting_answers_bounded()

    def resume_writing(self) -> None:
        self.stop_waiting_answer()
        super().resume_writing()

    def stop_waiting_answer(self) -> None:
        Held.waiting_answers.pop(self, None)
        if self.send_timer is not None:
            self.send_timer.cancel()
            self.send_timer = None

    def check_send_rate(self) -> None:
        self.send_timer = None
        waiting = self.transport.get_write_buffer_size()
        taken = self.send_window_start - waiting
        if waiting and taken < LIMITS.min_send_rate * LIMITS.rate_window_s:
            self.abandon_answer()
            return
        if not waiting:
            self.stop_waiting_answer()
            return
        self.send_window_start = waiting
        Held.waiting_answers[self] = waiting  # in place: the order stays longest-waiting first
        self.send_timer = self.loop.call_later(LIMITS.rate_window_s, self.check_send_rate)

    def keep_waiting_answers_bounded(self) -> None:
        """Past MAX_WAITING_ANSWER_BYTES, abandon the answers waiting longest (but the newest,
        which may be one answer larger than the bound alone)."""
        total = sum(Held.waiting_answers.values())
        while total > LIMITS.max_waiting_answer_bytes and len(Held.waiting_answers) > 1:
            oldest, waiting = next(iter(Held.waiting_answers.items()))
            total -= waiting
            oldest.abandon_answer()

    def abandon_answer(self) -> None:
        """Drop what waits for the client at once (abort: no lingering, nobody reads it)."""
        self.forget()
        self.transport.abort()  # connection_lost tells the app, and releases its drain

    # Refusing.

    def close_lingering(self, payload: bytes) -> None:
        """Send `payload`, shut the sending side once it has left, and read and drop whatever
        the client still sends until it closes too, for at most LINGER_SECONDS. A plain close
        with unread bytes makes the kernel answer a reset, which a client still sending reads
        instead of the answer (every refused upload saw ECONNRESET, not its 503)."""
        self.stop_requests()  # but an answer still leaving stays timed
        self.transport.write(payload)
        if Held.lingering >= MAX_LINGERING:
            self.close_now()
            return
        self.lingering = True
        Held.lingering += 1
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.flow.resume_reading()
        self.loop.call_later(LINGER_SECONDS, self.end_lingering)

    def end_lingering(self) -> None:
        if not self.transport.is_closing():
            self.close_now()
        else:  # closing already (the client closed first): no longer lingering
            self.stop_lingering()

    def refuse(self, status: int, detail: bytes) -> None:
        self.cancel_head_timer()
        if self.cycle is not None and not self.cycle.response_complete:
            # A pipelined head went wrong while the previous request is still being answered:
            # let that answer finish, then refuse and close (on_response_complete).
            # (It stays keep-alive until then: uvicorn would close before on_response_complete.)
            self.refusal = (status, detail)
            self.flow.pause_reading()
            return
        self.close_lingering(answer(status, detail))
