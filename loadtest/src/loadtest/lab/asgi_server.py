"""An ASGI app served by the harness's own uvicorn on 127.0.0.1, for as long as a `with` block
lasts: the near-free endpoint the load generators are measured against, and the tests' apps."""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import httpx

from loadtest.lab.errors import LabError
from loadtest.lab.http import http_get
from loadtest.lab.paths import LOADTEST_DIR
from loadtest.lab.processes import find_free_port, start_process, stop_process

LOADTEST_PYTHON = LOADTEST_DIR / ".venv" / "bin" / "python"


class Served(NamedTuple):
    url: str  # its base URL
    pid: int


@contextmanager
def asgi_server(
    app: str,
    log_path: Path,
    *,
    cpus: tuple[int, ...] | None = None,
    environment: dict[str, str] | None = None,
    port: int | None = None,
    app_dir: Path | None = None,
    ready_path: str = "/",
) -> Iterator[Served]:
    """The ASGI `app` (`module:attribute`) served by the harness's uvicorn on 127.0.0.1 (on
    `port`, or a free one), answering `ready_path`, while the `with` block lasts."""
    port = port or find_free_port()
    server = start_process(
        [
            str(LOADTEST_PYTHON),
            "-m",
            "uvicorn",
            app,
            *(["--app-dir", str(app_dir)] if app_dir else []),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-access-log",
            "--log-level",
            "warning",
            "--lifespan",
            "off",
        ],
        log_path=log_path,
        cpus=cpus,
        env=environment,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_serving(f"{url}{ready_path}", server)
        yield Served(url, server.pid)
    finally:
        stop_process(server)


def wait_until_serving(url: str, process: Any, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LabError(f"the server for {url} exited during start-up")
        try:
            if http_get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise LabError(f"the server for {url} did not answer within {timeout_s:.0f}s")
