"""Request heads are bounded (commons/http_protocol.py): a line and headers over
MAX_HEADER_BYTES get 431, and a head not complete within HEADER_TIMEOUT_SECONDS gets 408;
either way the connection is closed, and ordinary requests are untouched."""

import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tests.app_processes import APP_NAMES, RunningApp, start_app, stop_app
from tests.database_helpers import drop_database, recreate_database

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
    database = f"pydantic_lab_test_heads_{request.param.replace('-', '_')}"
    app = start_app(
        request.param,
        recreate_database(server_url, database),
        extra_environment={"HEADER_TIMEOUT_SECONDS": str(SHORT_TIMEOUT_S)},
    )
    yield app
    stop_app(app.process, app.log_path)
    drop_database(server_url, database)


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
