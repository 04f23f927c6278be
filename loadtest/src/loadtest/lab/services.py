"""An arm as something to start or reach: the structure both the lab's registry (commons/arms.py)
and a user's compare file (modes/compare/file.py) fill, and the one way the harness starts a
process it measures and waits for its health path."""

import ipaddress
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from loadtest.lab.errors import LabError
from loadtest.lab.http import http_client
from loadtest.lab.memory import MemoryReading, read_tree_memory
from loadtest.lab.processes import ensure_port_free, start_process, stop_process

LOG_TAIL_LINES = 5  # of a service that did not start, in its one-line error


@dataclass(frozen=True)
class Service:
    """One arm: a command the harness starts (in `cwd`, with `environment` added to its own,
    listening on `port`) or the base URL of a service already running (command None); either
    way it answers 200 on `health_path` once it is ready."""

    name: str
    label: str
    command: tuple[str, ...] | None
    port: int | None
    base_url: str
    health_path: str = "/health"
    cwd: Path | None = None
    environment: tuple[tuple[str, str], ...] = ()
    # Its log file's stem (the name when empty): how it is kept, not what is measured.
    log_name: str = field(default="", compare=False)

    @property
    def started_here(self) -> bool:
        return self.command is not None

    @property
    def what(self) -> str:
        """How errors and logs name it."""
        return self.log_name or self.name


def local_url(port: int) -> str:
    return f"http://127.0.0.1:{port}"


def is_loopback(base_url: str) -> bool:
    """Whether the URL's host is this machine (127.0.0.0/8, ::1, localhost)."""
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class RunningApp:
    """A started (or reached) arm, wherever it runs: a local process tree or a container."""

    name: str
    base_url: str
    versions: dict[str, Any]
    # None where nothing of it can be read (a service the harness did not start)
    read_memory: Callable[[], MemoryReading | None]
    stop: Callable[[], None]
    process: subprocess.Popen[bytes] | None = None  # local processes only
    started_s: float | None = None  # launch to the first 200 on its health path
    log_path: Path | None = None  # where a local process writes (its last lines: an error's)
    what: str = ""  # how errors name it (the lab's arms: their environment folder)
    # A container's main process as this machine sees it, where its /proc can be read.
    container_pid: int | None = None

    @property
    def pid(self) -> int | None:
        """The process tree's root, where its CPU can be read: the local process, or the
        container's main process (None where neither can be read)."""
        return self.process.pid if self.process is not None else self.container_pid


def log_tail(log_path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The log's last lines, joined with " | " for a one-line error."""
    if not log_path.exists():
        return "(no log)"
    tail = [line.strip() for line in log_path.read_text(errors="replace").splitlines()]
    return " | ".join([line for line in tail if line][-lines:]) or "(empty log)"


def start_service(
    service: Service,
    *,
    log_path: Path,
    environment: dict[str, str],
    cpus: tuple[int, ...] | None = None,
    timeout_s: float = 60,
    poll_s: float = 0.2,
    command: list[str] | None = None,
) -> RunningApp:
    """Start the service's command (or `command` in its place) and wait for its health path;
    a service already running is only asked for its health path. The versions are those its
    health answer reports under "versions" (the lab's apps do), or none."""
    if service.command is None:
        versions = wait_for_health(
            service.base_url + service.health_path, lambda: True, timeout_s, service.what, poll_s
        )
        return RunningApp(service.name, service.base_url, versions, lambda: None, lambda: None)
    if service.port is not None:
        ensure_port_free(service.port, service.what)
    launched = time.perf_counter()
    process = start_process(
        command or list(service.command),
        log_path=log_path,
        cpus=cpus,
        env={**environment, **dict(service.environment)},
        cwd=service.cwd,
    )

    def stop() -> None:
        # With whatever is below it, in a session of its own too (lab/processes.py).
        stop_process(process)

    is_alive = alive_check(process, service.what, log_path)
    try:
        versions = wait_for_health(
            service.base_url + service.health_path, is_alive, timeout_s, service.what, poll_s
        )
    except LabError as error:
        stop()
        if "did not answer" in str(error):
            raise LabError(f"{error}; its log ends: {log_tail(log_path)}") from None
        raise
    except BaseException:  # Ctrl-C too: the app runs in its own session and would outlive us
        stop()
        raise
    return RunningApp(
        service.name,
        service.base_url,
        versions,
        read_memory=lambda: read_tree_memory(process.pid),
        stop=stop,
        process=process,
        started_s=time.perf_counter() - launched,
        log_path=log_path,
        what=service.what,
    )


def alive_check(process: subprocess.Popen[bytes], what: str, log_path: Path) -> Callable[[], bool]:
    """True while the process runs; once it has exited, LabError with the end of its log."""

    def is_alive() -> bool:
        if process.poll() is None:
            return True
        raise LabError(
            f"{what} exited during start-up (status {process.returncode}): {log_tail(log_path)}"
        )

    return is_alive


def wait_for_health(
    url: str, is_alive: Callable[[], bool], timeout_s: float, what: str, poll_s: float = 0.2
) -> dict[str, Any]:
    """Poll `url` until it answers 200; returns the versions it reports, if any."""
    deadline = time.monotonic() + timeout_s
    last_status = None  # a server that answers, but not 200 (a wrong health path, say)
    # One client for all polls: a new one per poll costs ~25 ms (SSL context and all), which
    # would be the start-up figures' real resolution.
    with http_client(timeout=2) as client:
        while time.monotonic() < deadline and is_alive():
            try:
                response = client.get(url)
                if response.status_code == 200:
                    return health_versions(response)
                last_status = response.status_code
            except httpx.TransportError:
                pass
            time.sleep(poll_s)
    answered = f" (it answered {last_status})" if last_status is not None else ""
    raise LabError(f"{what} did not answer {url} within {timeout_s:g}s{answered}")


def health_versions(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    versions = body.get("versions") if isinstance(body, dict) else None
    return versions if isinstance(versions, dict) else {}
