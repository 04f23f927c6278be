"""ASGI types and a bare JSON answer, for the pure ASGI middlewares (body_limit.py,
database_deadline.py): they answer before FastAPI is reached, without its overhead."""

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Message, Receive, Send], Awaitable[None]]

# No route of the API reads a body on these.
BODILESS_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "DELETE"})


async def send_json(
    send: Send, status: int, body: bytes, headers: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
