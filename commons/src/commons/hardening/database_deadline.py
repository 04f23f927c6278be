"""Bounded waits on a stuck database: a request that needs it gets a 503 after
DATABASE_TIMEOUT_SECONDS (plus up to 2 s if it was opening a connection: libpq's shortest
connect time-out, and the watchdog's quarter-second poll).

A frozen PostgreSQL (SIGSTOP, a network partition) still has its connections accepted and its
bytes acknowledged by the kernel, so libpq never times out: a request would wait forever, holding
a worker thread and a pooled connection. So each request that uses the database gets a deadline:
pool waits and new connections are bounded by it, and a watchdog thread shuts down the socket of
any connection still checked out past it, which fails the blocked call at once (OperationalError,
a 503). Such requests also take one of a fixed number of slots (the pool's size) on the event
loop before they take a worker thread, so a stuck database cannot starve the database-free
endpoints of threads.
"""

import asyncio
import logging
import math
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.exc import InvalidatePoolError

from commons.hardening.asgi import BODILESS_METHODS, ASGIApp, Message, Receive, Send, send_json

# Set by DatabaseSlotsMiddleware for the request's task; worker threads inherit it (anyio runs
# sync dependencies and routes in a copy of the request's context).
REQUEST_DEADLINE: ContextVar[float | None] = ContextVar("request_deadline", default=None)
# libpq's connect_timeout is whole seconds, and it treats anything under 2 as 2.
MINIMUM_CONNECT_TIMEOUT_S = 2
MAXIMUM_CONNECT_TIMEOUT_S = 5  # an unreachable host is reported this soon, deadline or not
logger = logging.getLogger(__name__)
UNAVAILABLE_BODY = b'{"detail":"Database unavailable"}'  # as error_handlers.answer_database_error's


class DatabaseDeadlineExceeded(Exception):
    """The request's time for the database ran out before it could get or use a connection."""


def check_deadline() -> None:
    """Fail a request whose deadline has passed before it touches the pool (a checkout that
    fails would discard a healthy connection)."""
    deadline = REQUEST_DEADLINE.get()
    if deadline is not None and time.monotonic() >= deadline:
        raise DatabaseDeadlineExceeded("the request's time for the database ran out")


@contextmanager
def deadline_of(seconds: float) -> Iterator[None]:
    """A deadline of its own for work outside a request (creating the schema at start-up may
    wait for other workers' advisory lock longer than a request would)."""
    token = REQUEST_DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        REQUEST_DEADLINE.reset(token)


def current_deadline(timeout_s: float) -> float:
    """The request's deadline, or one from now for work outside a request."""
    return REQUEST_DEADLINE.get() or time.monotonic() + timeout_s


class ConnectionWatchdog:
    """Shuts down the socket of every connection still checked out after its deadline.

    It polls a few times a second rather than waking per request: registering a connection
    is a dict write under a lock, so the measured path pays next to nothing."""

    def __init__(self, timeout_s: float) -> None:
        # A floor too: a tiny timeout must not turn the watchdog into a busy loop.
        self.interval_s = max(0.02, min(0.25, timeout_s / 4))
        self._lock = threading.Lock()
        self._watched: dict[int, tuple[float, Any]] = {}  # id(record) -> (deadline, connection)
        self._thread: threading.Thread | None = None

    def watch(self, record: Any, dbapi_connection: Any, deadline: float) -> None:
        with self._lock:
            self._watched[id(record)] = (deadline, dbapi_connection)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="database-watchdog", daemon=True
                )
                self._thread.start()

    def release(self, record: Any) -> None:
        with self._lock:
            self._watched.pop(id(record), None)

    def _run(self) -> None:
        while True:
            time.sleep(self.interval_s)
            try:
                self.cut_expired()
            except Exception:  # never die quietly: the protection would be gone for good
                logger.exception("database watchdog: could not cut an expired connection")

    def cut_expired(self) -> None:
        now = time.monotonic()
        with self._lock:
            expired = [key for key, (deadline, _) in self._watched.items() if deadline <= now]
            for key in expired:
                _, dbapi_connection = self._watched.pop(key)
                shut_down_socket(dbapi_connection)


def shut_down_socket(dbapi_connection: Any) -> None:
    """Make the connection's blocked read or write return at once: the driver then reports the
    connection lost, and SQLAlchemy invalidates it. Works on a duplicate of the descriptor, so
    psycopg still owns (and later closes) its own."""
    # The async engine's is SQLAlchemy's adapter around psycopg's AsyncConnection.
    driver_connection = getattr(dbapi_connection, "driver_connection", dbapi_connection)
    try:
        descriptor = os.dup(driver_connection.pgconn.socket)
    except Exception:  # already closed: nothing is blocked on it
        return
    with socket.socket(fileno=descriptor) as duplicate:
        try:
            duplicate.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def bound_database_waits(engine: Engine, timeout_s: float) -> ConnectionWatchdog:
    """Give every checkout of `engine` a deadline, and replace `pool_pre_ping` with a ping
    that the deadline covers too (SQLAlchemy pings before its `checkout` event fires)."""
    watchdog = ConnectionWatchdog(timeout_s)
    dialect = engine.dialect

    @event.listens_for(engine, "do_connect")
    def bound_connect(_dialect: Any, _record: Any, _args: Any, params: dict[str, Any]) -> None:
        remaining = current_deadline(timeout_s) - time.monotonic()
        if remaining <= 0:
            raise DatabaseDeadlineExceeded("no connection to the database within the deadline")
        params["connect_timeout"] = max(
            MINIMUM_CONNECT_TIMEOUT_S, min(MAXIMUM_CONNECT_TIMEOUT_S, math.ceil(remaining))
        )

    @event.listens_for(engine, "connect")
    def mark_fresh(_dbapi_connection: Any, record: Any) -> None:
        record.info["fresh"] = True  # just connected: no need to ping it

    @event.listens_for(engine, "checkout")
    def watch_and_ping(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        deadline = current_deadline(timeout_s)
        if time.monotonic() >= deadline:
            raise DatabaseDeadlineExceeded("no connection to the database within the deadline")
        watchdog.watch(record, dbapi_connection, deadline)
        if record.info.pop("fresh", False):
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as error:
            watchdog.release(record)
            if not dialect.is_disconnect(error, dbapi_connection, None):
                raise
            # As pool_pre_ping does: drop the pool's connections (the server may have
            # restarted) and let SQLAlchemy connect afresh, within what is left of the deadline.
            raise InvalidatePoolError() from error

    @event.listens_for(engine, "checkin")
    def stop_watching(_dbapi_connection: Any, record: Any) -> None:
        # Fires after the pool's reset (the rollback on return), so that is bounded too.
        watchdog.release(record)

    return watchdog


class DatabaseSlots:
    """As many slots as the pool has connections; waiting for one happens on the event loop."""

    def __init__(self, size: int | None, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._semaphore = asyncio.Semaphore(size) if size else None

    async def acquire(self) -> None:
        if self._semaphore is None:
            return
        if not self._semaphore.locked():  # a free slot: taken at once, no timer to set up
            await self._semaphore.acquire()
            return
        try:
            async with asyncio.timeout(self.timeout_s):
                await self._semaphore.acquire()
        except TimeoutError:
            raise DatabaseDeadlineExceeded("every database connection is busy") from None

    def release(self) -> None:
        if self._semaphore is not None:
            self._semaphore.release()


class DatabaseSlotsMiddleware:
    """Takes a slot, and sets the deadline, for every request whose path uses the database.

    A pure ASGI middleware rather than a FastAPI dependency: an async dependency with `yield`
    cost ~25 µs a request (in-process, interleaved), about 2% of READ on Pydantic 2; this costs
    nothing measurable."""

    def __init__(
        self, app: ASGIApp, slots: DatabaseSlots, uses_database: Callable[[str], bool]
    ) -> None:
        self.app = app
        self.slots = slots
        self.uses_database = uses_database

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.uses_database(scope["path"]):
            await self.app(scope, receive, send)
            return
        if scope["method"] not in BODILESS_METHODS:
            # Read the body (BodySizeLimit, outside, bounds it) before taking a slot: a client
            # trickling its upload must not hold a slot, nor start the deadline, meanwhile.
            whole_body = await buffered(receive)
            if whole_body is None:
                return  # the client left (or its body timed out): nobody to answer
            receive = whole_body
        deadline = time.monotonic() + self.slots.timeout_s
        try:
            await self.slots.acquire()
        except DatabaseDeadlineExceeded:
            await send_json(send, 503, UNAVAILABLE_BODY)
            return
        REQUEST_DEADLINE.set(deadline)  # in this request's task: its worker threads copy it
        held = True

        async def send_then_release(message: Message) -> None:
            nonlocal held
            if held and message["type"] == "http.response.start":
                # The route has run: what is left (sending, closing the session, bounded by the
                # watchdog) needs no slot, and a client slow to read must not hold one.
                held = False
                self.slots.release()
            await send(message)

        try:
            await self.app(scope, receive, send_then_release)
        finally:
            if held:
                self.slots.release()


async def buffered(receive: Receive) -> Receive | None:
    """Read the whole request body now; the returned receive replays it, then passes on. None
    when the client leaves first: what was read is let go at once."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            message = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            break
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return message
        return await receive()

    return replay
