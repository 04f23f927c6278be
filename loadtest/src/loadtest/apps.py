"""Start an app (fresh process, its own locked environment) and read its /health."""

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from loadtest.processes import BenchmarkError, ensure_port_free, start_process, stop_process
from loadtest.settings import REPOSITORY_ROOT


@dataclass
class RunningApp:
    name: str
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: Path
    versions: dict[str, Any]

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        stop_process(self.process)


def app_command(name: str, port: int, workers: int) -> list[str]:
    python = REPOSITORY_ROOT / f"app_{name}" / ".venv" / "bin" / "python"
    # Access logs are off: they would cost both apps the same CPU and measure logging, not
    # Pydantic. The app's own python is used (not `uv run`) so memory is the app's alone.
    return [
        str(python), "-m", "uvicorn", f"app_{name}.main:app",
        "--host", "127.0.0.1", "--port", str(port),
        "--workers", str(workers), "--no-access-log", "--log-level", "warning",
    ]  # fmt: skip


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
) -> RunningApp:
    ensure_port_free(port, f"app_{name}")
    process = start_process(
        app_command(name, port, workers),
        log_path=log_path,
        cpus=cpus,
        env={**environment, "DATABASE_URL": database_url},
        cwd=REPOSITORY_ROOT,
    )
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            last_line = (log_path.read_text(errors="replace").strip().splitlines() or ["?"])[-1]
            raise BenchmarkError(f"app_{name} exited during start-up: {last_line}")
        try:
            response = httpx.get(f"{base_url}/health", timeout=2)
            if response.status_code == 200:
                return RunningApp(name, base_url, process, log_path, response.json()["versions"])
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    stop_process(process)
    raise BenchmarkError(f"app_{name} did not answer /health within {timeout_s:.0f}s")
