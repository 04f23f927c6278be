"""How fast locust can go on this machine: the same load against a near-free endpoint."""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import httpx

from loadtest.lab.errors import LabError
from loadtest.lab.paths import LOADTEST_DIR
from loadtest.lab.pinning import PinningPlan
from loadtest.lab.processes import find_free_port, start_process, stop_process
from loadtest.lab.progress import ProgressDisplay
from loadtest.load.locust_runs import (
    LOCUSTFILES,
    STOP_TIMEOUT_S,
    locust_command,
    run_locust,
)
from loadtest.load.settings import PairedLoadSettings

LOADTEST_PYTHON = LOADTEST_DIR / ".venv" / "bin" / "python"


def calibrate_load_generator(
    settings: PairedLoadSettings,
    pinning: PinningPlan,
    output_dir: Path,
    progress: ProgressDisplay,
    duration_s: float,
    environment: dict[str, str],
) -> dict[str, Any]:
    """Requests/s locust reached against the trivial endpoint (a floor on its capacity:
    the trivial server, on the app's cores, may itself be the limit)."""
    with trivial_server(pinning, output_dir, environment) as url:
        progress.begin("load generator calibration (trivial endpoint)", duration_s)
        prefix = output_dir / "calibration"
        run = run_locust(
            locust_command(
                host=url,
                users=settings.users,
                duration_s=duration_s,
                output_prefix=prefix,
                user_classes=["CalibrationUser"],
                load_processes=settings.load_processes,
                locustfile=LOCUSTFILES / "calibration_users.py",
            ),
            output_prefix=prefix,
            cpus=pinning.load_cpus if pinning.enabled else None,
            on_tick=progress.tick,
            timeout_s=duration_s + STOP_TIMEOUT_S + 60,
        )
    return {
        "rps": round(run.rps, 1),
        "requests": run.requests,
        "failures": run.failures,
        "duration_s": round(run.elapsed_s, 2),
        "locust_cpu_warnings": run.cpu_warnings,
        "locust_cpu_percent": run.cpu_percent,
    }


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


@contextmanager
def trivial_server(
    pinning: PinningPlan, output_dir: Path, environment: dict[str, str]
) -> Iterator[str]:
    """The near-free endpoint, served by uvicorn on the apps' CPUs: its base URL, while the
    `with` block lasts."""
    with asgi_server(
        "loadtest.load.trivial_app:app",
        output_dir / "trivial_app.log",
        cpus=pinning.app_cpus if pinning.enabled else None,
        environment=environment,
    ) as served:
        yield served.url


def wait_until_serving(url: str, process: Any, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LabError("the calibration server exited during start-up")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise LabError(f"the calibration server did not answer within {timeout_s:.0f}s")
