"""A service with a known cost, for checking `./test.sh compare` against the truth: every
request to /burn spends --ms milliseconds of CPU (this thread's own CPU time, not the clock),
so two of them, at 10 and 20 ms, should differ in throughput by about 2x. With --long-every N,
every Nth request costs --long-factor times as much (a real service's cache misses): the mean
cost, and so the ratio between two servers with the same pattern, is still known. The standard
library only: any python3 runs it.

    python3 server.py --port 8101 --ms 10
    python3 server.py --port 8103 --ms 8 --long-every 10 --long-factor 5
"""

import argparse
import itertools
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def burn(milliseconds: float) -> int:
    """Busy work until this thread has used `milliseconds` of CPU; returns the loop count."""
    until = time.thread_time() + milliseconds / 1000
    count = 0
    while time.thread_time() < until:
        count += 1
    return count


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the lab's apps serve
    milliseconds = 10.0
    long_every = 0  # 0: every request costs the same
    long_factor = 1.0
    requests = itertools.count(1)  # next() is atomic under the GIL: shared by the threads

    def cost_ms(self) -> float:
        number = next(self.requests)
        if self.long_every and number % self.long_every == 0:
            return self.milliseconds * self.long_factor
        return self.milliseconds

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/health":
            self.answer(200, {"status": "ok"})
        elif self.path == "/burn":
            cost = self.cost_ms()
            self.answer(200, {"burned_ms": cost, "loops": burn(cost)})
        else:
            self.answer(404, {"detail": "Not Found"})

    def answer(self, status: int, body: dict[str, object]) -> None:
        content = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # no access log: it would cost every request the same, and fill the run's log


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hung up mid-answer (a load tool stopping) is no error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ms", type=float, required=True, help="CPU per request, ms")
    parser.add_argument(
        "--long-every", type=int, default=0, help="every Nth request costs --long-factor times"
    )
    parser.add_argument("--long-factor", type=float, default=5.0)
    arguments = parser.parse_args()
    Handler.milliseconds = arguments.ms
    Handler.long_every = arguments.long_every
    Handler.long_factor = arguments.long_factor
    Server(("127.0.0.1", arguments.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
