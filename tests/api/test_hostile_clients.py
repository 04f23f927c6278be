"""Hostile clients, round two (issue 35), on every arm: answers never read, large answers asked
in parallel, body slots squatted with a few bytes, silent connections filling the server, and
refused uploads that must read their answer, not a reset. Each ran an app out of memory, held it
for as long as the clients liked, or denied honest clients, before the bounds of
commons/hardening/http_protocol.py and commons/hardening/payload_rows.py.

Memory is asserted as a ceiling (the app's peak RSS under CEILING_BYTES, the kernel's buffers of
its connections under what SEND_BUFFER_BYTES and RECEIVE_BUFFER_BYTES allow), and /health must
keep answering throughout (HEALTH_WITHIN_S, far from the time-outs of before; issue 53's
event-loop attacks ask 1 s, EVENT_LOOP_WITHIN_S, with the app on a CPU of its own). The
clients are the reported ones, at their reported size; the windows and deadlines are short
(through the environment) so the module runs in about a minute, and the byte budgets are the
defaults, whose ceiling docs/operations.md states. `LAB_FULL_SIZE_ATTACKS=1` runs them with the
default windows, deadlines and MAX_CONNECTIONS (two minutes)."""

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
import psutil
import pytest

from commons.config import RECEIVE_BUFFER_BYTES, SEND_BUFFER_BYTES, HttpLimits
from commons.payloads import bulk_post
from tests import loopback
from tests.api.test_request_heads import open_connection
from tests.api.test_unfinished_bodies import (
    answer_of,
    answers_of,
    peak_rss_bytes,
    status_of,
    uvicorn_process,
)
from tests.app_processes import APP_NAMES, RunningApp, app_on_its_own_database

# Its module-scoped servers start once: the module runs on one pytest-xdist worker.
pytestmark = pytest.mark.xdist_group("test_hostile_clients")

FULL_SIZE = os.environ.get("LAB_FULL_SIZE_ATTACKS") == "1"
DEFAULTS = HttpLimits()
RATE_WINDOW_S = DEFAULTS.rate_window_s if FULL_SIZE else 1.0
PAYLOAD_WAIT_S = 5.0 if FULL_SIZE else 1.0
BODY_TIMEOUT_S = DEFAULTS.body_timeout_s if FULL_SIZE else 4.0
MAX_CONNECTIONS = DEFAULTS.max_connections if FULL_SIZE else 200
# Slow, so that a test's honest uploads keep their pace without filling the body bytes.
MIN_UPLOAD_RATE = DEFAULTS.min_upload_rate if FULL_SIZE else 1024
# Small, so that two uploads fill it; the memory tests keep every other default budget.
MAX_BODY_BYTES_IN_FLIGHT = 1024 * 1024
# The ceiling docs/operations.md promises for an app under every attack at once, well inside the
# compose file's mem_limit (512M).
CEILING_BYTES = 400 * 1024 * 1024
# /health must keep answering: before, it took 31 s under the first attack. Not a speed
# figure: one largest answer alone holds v1-shim's event loop for up to ~3 s on a 2-vCPU VM
# (its FastAPI encodes pydantic.v1 models with jsonable_encoder there), which no bound on what
# clients hold can shorten; the other arms answered within 0.1 s (docs/operations.md).
HEALTH_WITHIN_S = 5.0
MIN_HEALTH_ASKS = 3  # a watch that asked fewer saw too little of the attack to vouch for it
LARGEST_ANSWER = "/payloads/nested?items=5000&comments=10"  # 55,000 rows, about 9 MB of JSON
NEVER_READING = 60
PARALLEL_READERS = 40
# Issue 53's event-loop attacks: answers of 5,000 flat posts, each about 0.16 s of v1's event
# loop and 0.23 s of v1-shim's (FastAPI serialises there on Pydantic 1), asked by clients that
# never read them, or by honest keep-alive readers who then ask a small request.
# MAX_BUILDING_ROWS keeps what the loop has queued to one such answer: /health and the small
# requests answer within EVENT_LOOP_WITHIN_S, as the issue asks. Without it, answers are
# serialised back to back (docs/operations.md has the figures, before and after). The app has
# a CPU of its own while they run (on_a_cpu_of_its_own).
FIVE_THOUSAND_POSTS = "/payloads/flat?items=5000"
EVENT_LOOP_WITHIN_S = 1.0
NEVER_READING_FLAT = 48 if FULL_SIZE else 24
HONEST_READERS = 100 if FULL_SIZE else 32
SQUATTERS = 64
PAST_THE_LIMIT = 50


@pytest.fixture(scope="module", params=APP_NAMES)
def bounded_app(request: pytest.FixtureRequest, server_url: str) -> Iterator[RunningApp]:
    with app_on_its_own_database(
        request.param,
        server_url,
        "pydantic_lab_test_hostile",
        {
            "RATE_WINDOW_SECONDS": str(RATE_WINDOW_S),
            "PAYLOAD_WAIT_SECONDS": str(PAYLOAD_WAIT_S),
            "BODY_TIMEOUT_SECONDS": str(BODY_TIMEOUT_S),
            "MAX_CONNECTIONS": str(MAX_CONNECTIONS),
            "MAX_BODY_BYTES_IN_FLIGHT": str(MAX_BODY_BYTES_IN_FLIGHT),
            "MIN_UPLOAD_BYTES_PER_SECOND": str(MIN_UPLOAD_RATE),
        },
    ) as app:
        yield app


def port_of(app: RunningApp) -> int:
    return urlsplit(app.base_url).port or 80


def established_connections(app: RunningApp) -> list[tuple[int, int]]:
    """The app's own established TCP connections: (bytes queued to send, bytes received and
    not read yet), as the kernel holds them (`ss`, iproute2)."""
    listing = subprocess.run(
        ["ss", "-tmnH", "state", "established", f"sport = :{port_of(app)}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [
        (int(queued), int(unread))
        for unread, queued in re.findall(r"skmem:\(r(\d+),rb\d+,t\d+,tb\d+,f\d+,w(\d+)", listing)
    ]


@dataclass
class Watch:
    """/health asked on a new connection, again 0.05 s after each answer (so a stall is
    measured nearly whole, whenever it begins), and the kernel's buffers of the app's
    connections read, while an attack runs."""

    app: RunningApp
    health_seconds: list[float] = field(default_factory=list)
    health_failures: list[str] = field(default_factory=list)
    kernel_peak_bytes: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                status = health_status(self.app)
                if status != "200":
                    self.health_failures.append(status)
            except Exception as error:  # noqa: BLE001 - any failure is recorded, and fails check()
                self.health_failures.append(repr(error))
            self.health_seconds.append(time.monotonic() - started)
            try:
                held = sum(queued + unread for queued, unread in established_connections(self.app))
            except Exception as error:  # noqa: BLE001 - as above
                self.health_failures.append(f"ss: {error!r}")
                held = 0
            self.kernel_peak_bytes = max(self.kernel_peak_bytes, held)
            self.stop.wait(0.05)

    def check(self, connections: int, within_s: float = HEALTH_WITHIN_S) -> None:
        print(  # the figures docs/operations.md quotes (pytest -rP shows them)
            f"{self.app.name}: /health at most {max(self.health_seconds):.2f} s in "
            f"{len(self.health_seconds)} asks; kernel buffers at most "
            f"{self.kernel_peak_bytes / 2**20:.2f} MiB"
        )
        assert not self.health_failures, self.health_failures[:5]
        assert len(self.health_seconds) >= MIN_HEALTH_ASKS, len(self.health_seconds)
        assert max(self.health_seconds) < within_s, (
            f"/health took up to {max(self.health_seconds):.2f} s"
        )
        # Linux allocates twice what SO_SNDBUF and SO_RCVBUF ask.
        kernel_bound = connections * 2 * (SEND_BUFFER_BYTES + RECEIVE_BUFFER_BYTES)
        assert self.kernel_peak_bytes < kernel_bound, (
            f"the kernel held {self.kernel_peak_bytes / 2**20:.1f} MiB of the app's connections"
        )


def health_status(app: RunningApp) -> str:
    """GET /health on a new connection, read until the server closes it: its status, or
    "incomplete" if fewer bytes came than its content-length. A bare socket, not httpx: a client
    built for each ask (httpx.get loads its certificates every time) needs tens of milliseconds
    of CPU, and on CPUs shared with a hundred reader threads it waited its turn for up to
    1.2-1.3 s, charged to /health, where a bare socket asking at the same moments waited at most
    0.25 s (docs/operations.md)."""
    with socket.create_connection(("127.0.0.1", port_of(app)), timeout=10) as connection:
        connection.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = answer_of(connection)
    head, _, body = answer.partition(b"\r\n\r\n")
    declared = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
    if declared is None or len(body) != int(declared.group(1)):
        return f"incomplete: {answer[:80]!r}"
    return status_of(answer)


@contextmanager
def on_a_cpu_of_its_own(app: RunningApp) -> Iterator[None]:
    """The app on one CPU, and this thread (so the watch and the clients it starts) on the
    others, as the benchmark pins its arms apart from its load (docs/methodology.md; here
    PostgreSQL is left unpinned). On two shared CPUs a hundred reader threads took the
    server's CPU in turns: a full collection of 0.06 s of CPU lasted 0.71 s, and /health waited
    for it. On one CPU the attack measures its own clients: the test is skipped."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs: one for the app, one for its clients")
    server, own = uvicorn_process(app), os.sched_getaffinity(0)
    try:
        pin_every_thread(server, {cpus[0]})
        os.sched_setaffinity(0, set(cpus[1:]))
        yield
    finally:
        os.sched_setaffinity(0, own)
        pin_every_thread(server, set(cpus))


def pin_every_thread(process: psutil.Process, cpus: set[int]) -> None:
    """Every thread of the process on `cpus`, until a listing finds none new: a thread started
    meanwhile inherits its starter's CPUs, and one that ended (an idle worker) is passed by."""
    pinned: set[int] = set()
    while new := {thread.id for thread in process.threads()} - pinned:
        for thread_id in sorted(new):  # the main thread (the process's own id) first
            with suppress(ProcessLookupError):
                os.sched_setaffinity(thread_id, cpus)
        pinned |= new


class watched:
    def __init__(self, app: RunningApp) -> None:
        self.watch = Watch(app)
        self.thread = threading.Thread(target=self.watch.run, daemon=True)

    def __enter__(self) -> Watch:
        self.thread.start()
        return self.watch

    def __exit__(self, *_: object) -> None:
        self.watch.stop.set()
        self.thread.join()


def assert_under_the_ceiling(app: RunningApp) -> None:
    peak = peak_rss_bytes(uvicorn_process(app))
    print(f"{app.name}: peak RSS {peak / 2**20:.0f} MiB")
    assert peak < CEILING_BYTES, f"peak RSS {peak / 2**20:.0f} MiB"


def never_reading_client(app: RunningApp, path: str) -> socket.socket:
    connection = socket.socket()
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    connection.settimeout(30)
    connection.connect(("127.0.0.1", port_of(app)))
    connection.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return connection


@pytest.mark.alone
def test_answers_never_read_are_abandoned_and_let_go(bounded_app: RunningApp) -> None:
    """Issue 35's first: sixty clients with a 4 KB receive buffer ask the largest answer and
    never read it. Before, all sixty stayed open (45 s and counting) and the app grew to
    779 MiB (v2) or 1,041 MiB (v1), its /health taking 31 s."""
    clients = [never_reading_client(bounded_app, LARGEST_ANSWER) for _ in range(NEVER_READING)]
    try:
        with watched(bounded_app) as watch:
            # Two windows for each answer let in, and the wait of those that were not.
            deadline = time.monotonic() + PAYLOAD_WAIT_S + 6 * RATE_WINDOW_S + 10
            while established_connections(bounded_app) and time.monotonic() < deadline:
                time.sleep(0.2)
        left = len(established_connections(bounded_app))
    finally:
        for client in clients:
            client.close()
    assert left == 0, f"{left} connections still open, holding their answers"
    watch.check(NEVER_READING)
    assert_under_the_ceiling(bounded_app)


@pytest.mark.alone
def test_large_answers_asked_in_parallel_wait_their_turn(bounded_app: RunningApp) -> None:
    """Issue 35's second: forty parallel readers of the largest answer. Before, v1 peaked at
    856 MiB and took 79 s. Now a request waits for room (MAX_PAYLOAD_ROWS, then
    MAX_BUILDING_ROWS) and, past PAYLOAD_WAIT_SECONDS, is answered 503 with Retry-After."""

    def ask(_: int) -> httpx.Response:
        return loopback.get(f"{bounded_app.base_url}{LARGEST_ANSWER}", timeout=120)

    with watched(bounded_app) as watch, ThreadPoolExecutor(PARALLEL_READERS) as pool:
        answers = list(pool.map(ask, range(PARALLEL_READERS)))
    statuses = Counter(answer.status_code for answer in answers)
    # Some answered, and some turned away: without the budget all forty are built at once.
    assert set(statuses) == {200, 503}, statuses
    for refused in (answer for answer in answers if answer.status_code == 503):
        assert refused.headers["retry-after"] == "1"
        # Whichever budget had no room: the rows in flight, or those being built.
        assert re.search(r"\(MAX_(PAYLOAD|BUILDING)_ROWS\)", refused.json()["detail"])
    assert all(len(answer.json()["posts"]) == 5000 for answer in answers if answer.is_success)
    watch.check(PARALLEL_READERS)
    assert_under_the_ceiling(bounded_app)


@pytest.mark.alone
def test_never_read_5000_post_answers_leave_the_event_loop_free(bounded_app: RunningApp) -> None:
    """Issue 53's first event-loop attack: 48 clients ask 5,000 posts and never read. Before,
    v1's /health took 5.9 s, /docs 5.7 s."""
    clients = [
        never_reading_client(bounded_app, FIVE_THOUSAND_POSTS) for _ in range(NEVER_READING_FLAT)
    ]
    try:
        with on_a_cpu_of_its_own(bounded_app), watched(bounded_app) as watch:
            deadline = time.monotonic() + PAYLOAD_WAIT_S + 6 * RATE_WINDOW_S + 10
            while established_connections(bounded_app) and time.monotonic() < deadline:
                time.sleep(0.2)
    finally:
        for client in clients:
            client.close()
    watch.check(NEVER_READING_FLAT, within_s=EVENT_LOOP_WITHIN_S)
    assert_under_the_ceiling(bounded_app)


@pytest.mark.alone
def test_honest_readers_of_5000_post_answers_leave_the_event_loop_free(
    bounded_app: RunningApp,
) -> None:
    """Issue 53's second: 100 clients on keep-alive connections each read a 5,000-post answer
    in full (or its 503), then ask a small request. Before, v1's /health took 21.3 s. The
    readers run in a process of their own, on the clients' CPU: in this one, they would hold
    the watch's interpreter lock and charge their own time to /health."""
    with on_a_cpu_of_its_own(bounded_app), watched(bounded_app) as watch:
        readers = subprocess.run(
            [
                sys.executable,
                "-c",
                HONEST_READERS_SCRIPT,
                bounded_app.base_url,
                str(HONEST_READERS),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert readers.returncode == 0, readers.stderr[-2000:]
    found = json.loads(readers.stdout)
    statuses, small = Counter(found["statuses"]), found["small_seconds"]
    print(f"{bounded_app.name}: {statuses}; small requests at most {max(small, default=0):.2f} s")
    watch.check(HONEST_READERS, within_s=EVENT_LOOP_WITHIN_S)
    assert set(statuses) <= {"200", "503"} and statuses["200"] > 0, statuses
    assert set(found["small_statuses"]) <= {"200", "404"}, found["small_statuses"]
    assert max(small) < EVENT_LOOP_WITHIN_S, f"a small request took {max(small):.2f} s"
    assert_under_the_ceiling(bounded_app)


# The readers as tasks on one thread, over bare streams: a hundred threads took turns at their
# own interpreter lock, and a small request's answer, arrived, waited for its thread's turn (up
# to 1.3 s); an httpx client per task read the answers more slowly than the threads had, so more
# of them were refused. A reader that fails is recorded as such, not a crash of all of them.
HONEST_READERS_SCRIPT = f"""
import asyncio, json, re, sys, time
from urllib.parse import urlsplit

ADDRESS = urlsplit(sys.argv[1])

async def ask(streams, path):
    reader, writer = streams
    writer.write(f"GET {{path}} HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\\r\\n\\r\\n")
    length = re.search(rb"(?im)^content-length:\\s*(\\d+)", head)
    if length is None:
        raise ValueError(f"no content-length in the answer to {{path}}: {{head[:200]!r}}")
    await reader.readexactly(int(length.group(1)))
    closes = re.search(rb"(?im)^connection:\\s*close", head) is not None
    return head[9:12].decode(), closes

async def read_then_ask_a_small_one():
    streams = None
    try:
        streams = await asyncio.open_connection(ADDRESS.hostname, ADDRESS.port)
        status, closes = await ask(streams, "{FIVE_THOUSAND_POSTS}")
        started = time.monotonic()
        if closes:  # a refusal may close the connection: the small request opens another
            streams[1].close()
            streams = await asyncio.open_connection(ADDRESS.hostname, ADDRESS.port)
        small, _ = await ask(streams, "/posts/1")
        return status, small, time.monotonic() - started
    except Exception as error:
        return f"error: {{error!r}}"[:300], None, None
    finally:
        if streams is not None:
            streams[1].close()

async def main():
    return await asyncio.gather(*(read_then_ask_a_small_one() for _ in range(int(sys.argv[2]))))

found = asyncio.run(main())
print(json.dumps({{
    "statuses": [status for status, _, _ in found],
    "small_statuses": [small for _, small, _ in found if small is not None],
    "small_seconds": [seconds for _, _, seconds in found if seconds is not None],
}}))
"""


def head_of_a_large_upload(app: RunningApp, declared: int = 1_000_000) -> socket.socket:
    connection = open_connection(app)
    connection.sendall(
        b"POST /posts_bulk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % declared
    )
    return connection


def bulk_body(posts: int = 1000) -> bytes:
    return httpx.Request("POST", "/", json={"posts": [bulk_post(n) for n in range(posts)]}).read()


def test_squatted_body_slots_deny_no_upload(bounded_app: RunningApp) -> None:
    """Issue 35's third: sixty-four connections each declare a 1,000,000-byte body and send 11
    bytes of it. Before, they filled every body slot (MAX_UNFINISHED_BODIES) for 30 s, and a
    1,000-post bulk got a reset while still sending. Now slots are bytes, which 11 bytes barely
    touch, and a body arriving slower than MIN_UPLOAD_BYTES_PER_SECOND gets 408."""
    squatters = [head_of_a_large_upload(bounded_app) for _ in range(SQUATTERS)]
    try:
        for squatter in squatters:
            squatter.sendall(b'{"posts": [')
        time.sleep(0.2)  # the bytes are read: the bodies are being received over several reads
        upload = loopback.post(
            f"{bounded_app.base_url}/posts_bulk",
            content=bulk_body(),
            headers={"content-type": "application/json"},
            timeout=30,
        )
        answers = answers_of(squatters, timeout_s=BODY_TIMEOUT_S + 5)
    finally:
        for squatter in squatters:
            squatter.close()
    assert upload.status_code == 201, upload.text[:300]
    assert len(upload.json()["ids"]) == 1000
    assert Counter(status_of(answer) for answer in answers) == {"408": SQUATTERS}
    assert all(b"MIN_UPLOAD_BYTES_PER_SECOND" in answer for answer in answers)


def test_an_upload_past_the_body_bytes_reads_its_503_not_a_reset(bounded_app: RunningApp) -> None:
    """The bytes of unfinished bodies are bounded (MAX_BODY_BYTES_IN_FLIGHT, 1 MiB here): two
    uploads of 450,000 bytes each hold most of it, and a third, a 1,000-post bulk sent whole, is
    answered 503 with Retry-After, which it reads: the server reads and drops the rest of its
    body before closing (a lingering close), where a plain close answered a reset."""
    holders = [head_of_a_large_upload(bounded_app) for _ in range(2)]
    try:
        for holder in holders:
            holder.sendall(b'{"posts": [' + b" " * 450_000)
        time.sleep(0.3)
        body = bulk_body()
        with head_of_a_large_upload(bounded_app, declared=len(body)) as refused:
            time.sleep(0.1)  # its body arrives over several reads, after its head
            answer = sent_whole_then_answered(refused, body)
    finally:
        for holder in holders:
            holder.close()
    assert_busy(answer, b"MAX_BODY_BYTES_IN_FLIGHT")


def sent_whole_then_answered(connection: socket.socket, data: bytes) -> bytes:
    """Send all of `data`, then read the answer: a server that closes without reading the
    rest (no lingering close) makes the send fail with a reset or a broken pipe."""
    try:
        connection.sendall(data)
    except (BrokenPipeError, ConnectionResetError) as error:
        pytest.fail(f"the refused request could not be sent whole: {error!r}")
    return answer_of(connection)


def assert_busy(answer: bytes, limit: bytes) -> None:
    assert status_of(answer) == "503", answer[:300]
    assert b"retry-after: 1\r\n" in answer and limit in answer


def closed_by_the_server(connection: socket.socket) -> bool:
    """Closed without an answer (a read sees the end at once), not merely silent: a connection
    the server keeps open times out (the head time-out is far longer than this wait)."""
    connection.settimeout(2)
    try:
        return connection.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_silent_connections_cannot_fill_the_server(bounded_app: RunningApp) -> None:
    """Issue 35's fourth: connections that send nothing, more than MAX_CONNECTIONS of them.
    Before, every request failed until the head time-out, mostly with a reset. Now a new
    connection closes the one idle the longest, so honest requests are answered."""
    silent = [open_connection(bounded_app) for _ in range(MAX_CONNECTIONS + PAST_THE_LIMIT)]
    try:
        statuses = Counter(
            loopback.get(f"{bounded_app.base_url}/posts?per_page=1", timeout=10).status_code
            for _ in range(20)
        )
        closed = sum(closed_by_the_server(connection) for connection in silent[:PAST_THE_LIMIT])
    finally:
        for connection in silent:
            connection.close()
    assert statuses == {200: 20}, statuses
    assert closed == PAST_THE_LIMIT  # the oldest were closed, without an answer


def test_a_connection_past_busy_ones_reads_its_503_not_a_reset(bounded_app: RunningApp) -> None:
    """With every connection busy (receiving a body at an honest pace: none is idle, none
    slower than MIN_UPLOAD_BYTES_PER_SECOND, so none is closed to make room), one more is
    answered 503 with Retry-After, and reads it although it had sent a whole request (before:
    a reset or a broken pipe)."""
    busy = [head_of_a_large_upload(bounded_app) for _ in range(MAX_CONNECTIONS + 5)]
    try:
        for connection in busy:  # all of them together well inside MAX_BODY_BYTES_IN_FLIGHT
            connection.sendall(b'{"posts": [' + b" " * 4000)
        with open_connection(bounded_app) as late:
            body = bulk_body(posts=100)
            request = (
                b"POST /posts_bulk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            answer = sent_whole_then_answered(late, request)
    finally:
        for connection in busy:
            connection.close()
    assert_busy(answer, b"MAX_CONNECTIONS")
