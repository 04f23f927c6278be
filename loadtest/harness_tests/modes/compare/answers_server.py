"""A tiny service with fixed answers for test_verify.py, the standard library only:

- `GET /health`: 200 `{"status": "ok"}`;
- `GET /when`: `{"when": "2024-01-01T00:00:00Z", "n": 1}` (--variant zulu) or
  `{"when": "2024-01-01T00:00:00+00:00", "n": 2}` (--variant offset);
- `GET /text`: 200, `hello` as text/plain;
- `POST /posts`: 201 with the JSON body's title and a new id; `GET /posts/ID` reads the row
  back (with --alter, its title changed on the way: a store that loses what it was given);
- with --token T, every path but /health answers 401 unless the request carries `X-Token: T`.

    python answers_server.py --port 8101 --variant zulu
"""

import argparse
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WHEN = {
    "zulu": {"when": "2024-01-01T00:00:00Z", "n": 1},
    "offset": {"when": "2024-01-01T00:00:00+00:00", "n": 2},
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    variant = "zulu"
    alter = False
    token: str | None = None
    posts: dict[int, dict[str, Any]] = {}

    def allowed(self) -> bool:
        if self.token is None or self.headers.get("X-Token") == self.token:
            return True
        self.answer(401, {"detail": "no token"})
        return False

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/health":
            self.answer(200, {"status": "ok"})
        elif not self.allowed():
            return
        elif self.path == "/when":
            self.answer(200, WHEN[self.variant])
        elif self.path == "/text":
            self.answer(200, "hello")
        elif self.path.startswith("/posts/") and self.path[7:].isdigit():
            post = self.posts.get(int(self.path[7:]))
            self.answer(*((200, post) if post else (404, {"detail": "Not Found"})))
        else:
            self.answer(404, {"detail": "Not Found"})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if not self.allowed():
            return
        if self.path != "/posts":
            self.answer(404, {"detail": "Not Found"})
            return
        post = {"id": len(self.posts) + 1, "title": body.get("title")}
        self.posts[post["id"]] = {**post, "title": f"{post['title']}!"} if self.alter else post
        self.answer(201, post)

    def answer(self, status: int, body: Any) -> None:
        text = isinstance(body, str)
        content = body.encode() if text else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain" if text else "application/json")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--variant", choices=tuple(WHEN), default="zulu")
    parser.add_argument("--alter", action="store_true")
    parser.add_argument("--token")
    arguments = parser.parse_args()
    Handler.variant, Handler.alter, Handler.token = (
        arguments.variant,
        arguments.alter,
        arguments.token,
    )
    server = ThreadingHTTPServer(("127.0.0.1", arguments.port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
