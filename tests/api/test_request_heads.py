"""Request heads are bounded (commons/hardening/http_protocol.py): a line and headers over
MAX_HEADER_BYTES get 431, and a head not complete within HEADER_TIMEOUT_SECONDS gets 408;
either way the connection is closed, and ordinary requests are untouched, pipelined ones too,
wherever the reads split them."""

import itertools
import json
import re
import socket
import time
from collections import Counter
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tests.app_processes import APP_NAMES, RunningApp, app_on_its_own_database
from tests.factories import post_body

# Its module-scoped servers start once: the module runs on one pytest-xdist worker.
pytestmark = pytest.mark.xdist_group("test_request_heads")

DEFAULT_MAX_HEADER_BYTES = 64 * 1024
SHORT_TIMEOUT_S = 1
# Generous beside SHORT_TIMEOUT_S: only a head that is never timed out (the bug) reaches it.
READ_TIMEOUT_S = 20


def open_connection(app: RunningApp) -> socket.socket:
    address = urlsplit(app.base_url)
    connection = socket.create_connection((address.hostname, address.port), timeout=READ_TIMEOUT_S)
    return connection


def read_until_closed(connection: socket.socket) -> bytes:
    """Everything the server sends before it closes the connection."""
    received = b""
    while chunk := connection.recv(65_536):
        received += chunk
    return received


def send_head(app: RunningApp, header_value_bytes: int) -> bytes:
    with open_connection(app) as connection:
        head = (
            b"GET /posts_synthetic?per_page=1 HTTP/1.1\r\nHost: x\r\nX-Padding: "
            + b"a" * header_value_bytes
            + b"\r\nConnection: close\r\n\r\n"
        )
        try:
            connection.sendall(head)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before all of it was sent: the answer is still waiting to be read
        return read_until_closed(connection)


def test_a_head_over_the_limit_is_431(app: RunningApp) -> None:
    answer = send_head(app, DEFAULT_MAX_HEADER_BYTES + 1)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b"MAX_HEADER_BYTES" in answer


def test_a_100_mb_header_is_refused_without_reading_it(app: RunningApp) -> None:
    with open_connection(app) as connection:
        connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Padding: ")
        sent = 0
        try:
            while sent < 100 * 1024 * 1024:
                connection.sendall(b"a" * 1024 * 1024)
                sent += 1024 * 1024
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert sent < 100 * 1024 * 1024, "the server kept reading a 100 MB header"


def test_a_head_just_under_the_limit_is_served(app: RunningApp) -> None:
    answer = send_head(app, DEFAULT_MAX_HEADER_BYTES - 1024)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]


def test_keep_alive_requests_each_get_the_full_limit(client: httpx.Client) -> None:
    padding = {"X-Padding": "a" * (DEFAULT_MAX_HEADER_BYTES // 2)}
    for _ in range(4):  # four heads of half the limit each, on one connection
        assert client.get("/posts_synthetic?per_page=1", headers=padding).status_code == 200


@pytest.fixture(scope="module", params=APP_NAMES)
def impatient_app(request: pytest.FixtureRequest, server_url: str) -> Iterator[RunningApp]:
    """An app with HEADER_TIMEOUT_SECONDS=1 (the default, 10 s, would make a slow test)."""
    with app_on_its_own_database(
        request.param,
        server_url,
        "pydantic_lab_test_heads",
        {"HEADER_TIMEOUT_SECONDS": str(SHORT_TIMEOUT_S)},
    ) as app:
        yield app


def test_an_unfinished_head_is_408_and_closed(impatient_app: RunningApp) -> None:
    with open_connection(impatient_app) as connection:
        connection.sendall(b"GET /posts_synthetic HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        answer = read_until_closed(connection)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b"HEADER_TIMEOUT_SECONDS" in answer


def test_a_silent_connection_is_closed(impatient_app: RunningApp) -> None:
    with open_connection(impatient_app) as connection:
        assert read_until_closed(connection) == b""


def test_a_head_sent_in_pieces_within_the_time_is_served(impatient_app: RunningApp) -> None:
    with open_connection(impatient_app) as connection:
        for piece in (b"GET /posts_synthetic?per_page=1 HTTP/1.1\r\n", b"Host: x\r\n"):
            connection.sendall(piece)
            time.sleep(SHORT_TIMEOUT_S / 4)
        connection.sendall(b"Connection: close\r\n\r\n")
        assert read_until_closed(connection).startswith(b"HTTP/1.1 200 ")


def test_a_pipelined_head_over_the_limit_is_431_after_the_first_answer(app: RunningApp) -> None:
    with open_connection(app) as connection:
        connection.sendall(
            b"GET /posts_synthetic?per_page=1 HTTP/1.1\r\nHost: x\r\n\r\n"
            b"GET /posts_synthetic?per_page=1 HTTP/1.1\r\nHost: x\r\nX-Padding: "
            + b"a" * (DEFAULT_MAX_HEADER_BYTES + 1)
            + b"\r\n\r\n"
        )
        answer = read_until_closed(connection)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    assert answer.count(b"HTTP/1.1 ") == 2 and b"HTTP/1.1 431 " in answer, answer[-300:]


def test_a_head_begun_behind_a_request_and_left_unfinished_is_408(
    impatient_app: RunningApp,
) -> None:
    with open_connection(impatient_app) as connection:
        connection.sendall(
            b"GET /posts_synthetic?per_page=1 HTTP/1.1\r\nHost: x\r\n\r\n"
            b"GET /posts_synthetic HTTP/1.1\r\nHost: x\r\nX-Slow: "
        )
        answer = read_until_closed(connection)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    assert b"HTTP/1.1 408 " in answer, answer[-300:]


# Pipelining: only a head's own bytes count toward MAX_HEADER_BYTES, wherever the reads end.
# Each piece is sent on its own, with a pause, so that the server reads the stream where it was
# cut (as far as the kernel lets it); what is asserted is every answer, not how fast it came.
PAUSE_BETWEEN_PIECES_S = 0.02
SMALL_GET = (
    b"GET /posts_synthetic?per_page=1 HTTP/1.1\r\nHost: x\r\n\r\n"  # 53 bytes, as in issue 20
)
LAST_GET = b"GET /posts_synthetic?per_page=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
PADDED_GET = (
    b"GET /posts_synthetic?per_page=1 HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"p" * 900 + b"\r\n\r\n"
)


def send_cut(app: RunningApp, stream: bytes, *cuts: int) -> bytes:
    """Send `stream` in pieces cut at `cuts`; everything answered until the server closes."""
    received = b""
    with open_connection(app) as connection:
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            for start, end in itertools.pairwise((0, *cuts, len(stream))):
                connection.sendall(stream[start:end])
                time.sleep(PAUSE_BETWEEN_PIECES_S)
            while chunk := connection.recv(65_536):
                received += chunk
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused: what was answered before is in `received`
    return received


def statuses(answers: bytes) -> Counter[bytes]:
    return Counter(re.findall(rb"HTTP/1\.1 (\d{3}) ", answers))


def test_1300_pipelined_requests_cut_after_64_kib_are_all_answered(app: RunningApp) -> None:
    """Issue 20: 1,245 answered 200, then a 431 'over 65536 bytes' for a 53-byte request."""
    stream = SMALL_GET * 1299 + LAST_GET
    assert statuses(send_cut(app, stream, 66_000)) == {b"200": 1300}


def test_pipelined_requests_cut_anywhere_are_all_answered(app: RunningApp) -> None:
    stream = PADDED_GET * 79 + LAST_GET  # 76 KB: the reads around 64 KiB end inside heads
    wrong = {}
    for cut in range(60_000, len(stream), 487):
        answered = statuses(send_cut(app, stream, cut))
        if answered != {b"200": 80}:
            wrong[cut] = answered
    assert not wrong


def test_a_request_pipelined_after_a_large_body_is_answered_wherever_cut(app: RunningApp) -> None:
    """Issue 20: a POST with a 90 KB body and a pipelined GET, cut inside the GET: 201, 431."""
    body = json.dumps(post_body(content="A" * 90_000)).encode()
    post = (
        b"POST /posts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    stream = post + LAST_GET
    cuts = [*range(1_000, len(post), 11_000), *range(len(post) - 4, len(stream), 3)]
    wrong = {}
    for cut in cuts:
        answered = statuses(send_cut(app, stream, cut))
        if answered != {b"201": 1, b"200": 1}:
            wrong[cut] = answered
    assert not wrong


def test_a_pipelined_head_over_the_limit_is_431_wherever_cut(app: RunningApp) -> None:
    """Its own bytes still count, whichever read they arrive in."""
    too_large = (
        b"GET /posts_synthetic?per_page=1 HTTP/1.1\r\nHost: x\r\nX-Padding: "
        + b"a" * DEFAULT_MAX_HEADER_BYTES
        + b"\r\n\r\n"
    )
    stream = SMALL_GET + too_large
    for cut in (len(SMALL_GET) + 10, len(SMALL_GET) + 40_000, len(stream) - 10):
        assert statuses(send_cut(app, stream, cut)) == {b"200": 1, b"431": 1}, cut
