"""Test-only helpers: start an app with the command docs/operations.md gives, and wait until
it serves."""

import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from commons import HTTP_PROTOCOL
from commons.arms import ARM_NAMES, ARMS
from tests import loopback
from tests.database_helpers import drop_database, recreate_database

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
APP_NAMES = ARM_NAMES  # every arm of the registry (commons/arms.py), default or not


# Ports the tests hand out: below the kernel's ephemeral range (32768 on), and a block of its
# own per pytest-xdist worker, so tests running in parallel never pick the same one (the
# harness's tests use the blocks from 20000, these from 26000).
PORTS_FROM, PORTS_PER_WORKER = 26_000, 1_000


def find_free_port() -> int:
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    first = PORTS_FROM + (worker % 6) * PORTS_PER_WORKER
    for port in random.sample(range(first, first + PORTS_PER_WORKER), PORTS_PER_WORKER):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {first}-{first + PORTS_PER_WORKER - 1}")


def app_command(app_name: str, port: int) -> list[str]:
    uv = shutil.which("uv") or "uv"
    arm = ARMS[app_name]
    return [
        uv,
        "run",
        "--locked",
        "--project",
        arm.environment,
        "uvicorn",
        arm.module,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--http",
        HTTP_PROTOCOL,
    ]


@dataclass
class RunningApp:
    name: str
    base_url: str
    database_url: str
    process: subprocess.Popen[bytes]
    log_path: Path


def start_app(
    app_name: str,
    database_url: str,
    timeout_seconds: float = 60,
    extra_environment: dict[str, str] | None = None,
) -> RunningApp:
    port = find_free_port()
    # A file, not a pipe: a server's log would fill a pipe nobody reads and stall it.
    project = ARMS[app_name].environment
    log_path = Path(tempfile.mkstemp(prefix=f"{project}-", suffix=".log")[1])
    environment = {**os.environ, "DATABASE_URL": database_url, **(extra_environment or {})}
    environment.pop("VIRTUAL_ENV", None)  # the app runs in its own project environment
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            app_command(app_name, port),
            cwd=REPOSITORY_ROOT,
            env=environment,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error_output = log_path.read_text(errors="replace")
            raise RuntimeError(f"{project} exited with {process.returncode}: {error_output}")
        try:
            if loopback.get(f"{base_url}/health", timeout=1).status_code == 200:
                return RunningApp(app_name, base_url, database_url, process, log_path)
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    stop_app(process)
    raise RuntimeError(f"{project} did not answer /health within {timeout_seconds}s")


def stop_app(process: subprocess.Popen[bytes], log_path: Path | None = None) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if log_path is not None:
        log_path.unlink(missing_ok=True)


@contextmanager
def app_on_its_own_database(
    app_name: str, server_url: str, database_prefix: str, environment: dict[str, str]
) -> Iterator[RunningApp]:
    """An arm started with settings of its own on a database of its own (made afresh, dropped
    afterwards): what a module that bends an app's limits gives each arm."""
    database = f"{database_prefix}_{app_name.replace('-', '_')}"
    app = start_app(
        app_name, recreate_database(server_url, database), extra_environment=environment
    )
    try:
        yield app
    finally:
        stop_app(app.process, app.log_path)
        drop_database(server_url, database)
