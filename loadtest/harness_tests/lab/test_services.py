"""Waiting for a service's health path: what the one line says when it never answers 200."""

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness_tests.runner import free_port
from loadtest.lab.errors import LabError
from loadtest.lab.services import wait_for_health


class NotFound(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture
def answering_404() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_server_answering_but_not_200_is_named_with_its_status(answering_404: str) -> None:
    """A wrong health path is not "nothing there": the line says what it answered."""
    url = f"{answering_404}/healthz"
    # Room for the first answer (it comes at once; 0.5 s once passed with none, inside the
    # parallel suite on two busy CPUs): the wait lasts the whole bound, as a 404 is never ready.
    with pytest.raises(LabError) as raised:
        wait_for_health(url, lambda: True, 3, "after", poll_s=0.1)
    assert str(raised.value) == f"after did not answer {url} within 3s (it answered 404)"


def test_nothing_listening_says_only_that_it_did_not_answer() -> None:
    url = f"http://127.0.0.1:{free_port()}/health"
    with pytest.raises(LabError) as raised:
        wait_for_health(url, lambda: True, 0.5, "after", poll_s=0.1)
    assert str(raised.value) == f"after did not answer {url} within 0.5s"
