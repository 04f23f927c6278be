"""The hardening: bounds on what a client can make an app hold (memory, connections, threads) or
wait for, each past its bound answered with a status and a small body instead.

- http_protocol.py: a request head's size and time, a body's time and rate, the bytes of bodies
  in flight, answers waiting on clients (their rate and bytes), the kernel's buffers, and the
  connections a process holds (431, 408, 503), in uvicorn, before the app is reached;
- payload_rows.py: the rows the payload routes build and send at once (503 past a wait);
- body_limit.py: a body's size (413), before it is read whole;
- database_deadline.py: the wait for a stuck database (503 after DATABASE_TIMEOUT_SECONDS), and
  how many worker threads such waits can hold;
- error_bodies.py: the size of a 422 body, whatever input it echoes;
- error_handlers.py: the status of each error a request can end in (422, 405, 503, not a 500);
- asgi.py: what the pure ASGI middlewares share.
"""
