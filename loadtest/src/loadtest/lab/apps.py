"""Start an app (fresh process, its own locked environment) and read its /health."""

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from commons import HTTP_PROTOCOL
from loadtest.lab.arms import ARMS, arm_python
from loadtest.lab.errors import LabError
from loadtest.lab.memory import MemoryReading, read_tree_memory
from loadtest.lab.paths import REPOSITORY_ROOT
from loadtest.lab.processes import ensure_port_free, start_process, stop_process


@dataclass
class RunningApp:
    """A started app, wherever it runs: a local process tree or a container."""

    name: str
    base_url: str
    versions: dict[str, Any]
    read_memory: Callable[[], MemoryReading]
    stop: Callable[[], None]
    process: subprocess.Popen[bytes] | None = None  # local apps only

    @property
    def pid(self) -> int | None:
        """The process tree's root, where its CPU can be read (None in a container)."""
        return self.process.pid if self.process is not None else None


def uvicorn_arguments(name: str, port: int, workers: int) -> list[str]:
    # Access logs are off: they would cost every arm the same CPU and measure logging, not
    # Pydantic.
    return [
        ARMS[name].module,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--http",
        HTTP_PROTOCOL,
        "--workers",
        str(workers),
        "--no-access-log",
        "--log-level",
        "warning",
    ]


def app_command(name: str, port: int, workers: int) -> list[str]:
    return [str(arm_python(name)), "-m", "uvicorn", *uvicorn_arguments(name, port, workers)]


def start_app(
    name: str,
    *,
    port: int,
    workers: int,
    database_url: str,
    cpus: tuple[int, ...] | None,
    log_path: Path,
    environment: dict[str, str],
    timeout_s: float = 60,
    poll_s: float = 0.2,
    command: list[str] | None = None,
) -> RunningApp:
    """Start the arm (with `command` instead of the usual uvicorn command line, if given) and
    wait for its /health."""
    what = ARMS[name].environment
    ensure_port_free(port, what)
    process = start_process(
        command or app_command(name, port, workers),
        log_path=log_path,
        cpus=cpus,
        env={**environment, "DATABASE_URL": database_url},
        cwd=REPOSITORY_ROOT,
    )
    base_url = f"http://127.0.0.1:{port}"

    def is_alive() -> bool:
        if process.poll() is None:
            return True
        last_line = (log_path.read_text(errors="replace").strip().splitlines() or ["?"])[-1]
        raise LabError(f"{what} exited during start-up: {last_line}")

    try:
        versions = wait_for_health(base_url, is_alive, timeout_s, what, poll_s)
    except BaseException:  # Ctrl-C too: the app runs in its own session and would outlive us
        stop_process(process)
        raise
    return RunningApp(
        name,
        base_url,
        versions,
        read_memory=lambda: read_tree_memory(process.pid),
        stop=lambda: stop_process(process),
        process=process,
    )


def wait_for_health(
    base_url: str, is_alive: Callable[[], bool], timeout_s: float, what: str, poll_s: float = 0.2
) -> dict[str, Any]:
    """Poll /health until it answers 200; returns the versions it reports."""
    deadline = time.monotonic() + timeout_s
    # One client for all polls: a new one per poll costs ~25 ms (SSL context and all), which
    # would be the start-up figures' real resolution.
    with httpx.Client(timeout=2) as client:
        while time.monotonic() < deadline and is_alive():
            try:
                response = client.get(f"{base_url}/health")
                if response.status_code == 200:
                    return response.json()["versions"]
            except httpx.TransportError:
                pass
            time.sleep(poll_s)
    raise LabError(f"{what} did not answer {base_url}/health within {timeout_s:.0f}s")
