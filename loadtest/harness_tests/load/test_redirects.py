"""Load goes only where the file says (issue 53): an arm answering 302 to another address gets
its 302 counted as a wrong status, by locust's users and by the open-loop generator alike, and
the other address gets no request. Before, verification passed (httpx does not follow) and then
locust followed every redirect under load, past the loopback-only rule."""

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from loadtest.load.open_loop.generator import Generator
from loadtest.load.plan import Request

READ = Request("GET", "/posts", prefix='{"posts":')


@dataclass
class Servers:
    arm: str
    elsewhere: str
    reached: list[str] = field(default_factory=list)  # paths asked of `elsewhere`


@pytest.fixture
def redirecting_arm() -> Iterator[Servers]:
    """An arm that answers every request with a redirect to a second server, which counts what
    reaches it."""
    reached: list[str] = []

    class Elsewhere(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            reached.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "12")
            self.end_headers()
            self.wfile.write(b'{"posts":[]}')

        def log_message(self, *_: object) -> None:
            pass

    elsewhere = ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)
    elsewhere_url = f"http://127.0.0.1:{elsewhere.server_port}"

    class Redirecting(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", f"{elsewhere_url}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    arm = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    for server in (elsewhere, arm):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield Servers(f"http://127.0.0.1:{arm.server_port}", elsewhere_url, reached)
    finally:
        for server in (elsewhere, arm):
            server.shutdown()
            server.server_close()


def test_the_open_loop_generator_counts_a_redirect_and_does_not_follow_it(
    redirecting_arm: Servers,
) -> None:
    async def send() -> str | None:
        generator = Generator()
        target = generator.target(
            {"request": READ.as_dict(), "url": redirecting_arm.arm + READ.path, "connections": 1}
        )
        try:
            problem, _ = await generator.send(target)
        finally:
            await generator.close()
        return problem

    assert asyncio.run(send()) == "status 302"
    assert redirecting_arm.reached == []


# In a process of its own: importing locust patches the standard library with gevent's.
LOCUST_SEND = """
import json, sys
from locust.contrib.fasthttp import FastHttpSession, FastHttpUser
from locust.env import Environment
from loadtest.load.locustfiles.checked import send_checked
from loadtest.load.plan import Request

environment = Environment()
failures = []
environment.events.request.add_listener(
    lambda exception=None, **_: failures.append(str(exception)) if exception else None
)
session = FastHttpSession(  # as a FastHttpUser makes its client, redirects as it allows them
    sys.argv[1], environment.events.request, None, max_redirects=FastHttpUser.max_redirects
)
request = Request.from_dict(json.loads(sys.argv[2]))
send_checked(session, request, sys.argv[1] + request.path, "read")
print(json.dumps(failures))
"""


def test_the_paired_users_count_a_redirect_and_do_not_follow_it(redirecting_arm: Servers) -> None:
    sent = subprocess.run(
        [sys.executable, "-c", LOCUST_SEND, redirecting_arm.arm, json.dumps(READ.as_dict())],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert sent.returncode == 0, sent.stderr[-2000:]
    failures = json.loads(sent.stdout.splitlines()[-1])
    assert len(failures) == 1 and "status 302" in failures[0], failures
    assert redirecting_arm.reached == []
