"""How fast locust can go on this machine: the same load against a near-free endpoint."""

import time
from pathlib import Path
from typing import Any

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
    port = find_free_port()
    server = start_process(
        [
            str(LOADTEST_PYTHON),
            "-m",
            "uvicorn",
            "loadtest.load.trivial_app:app",
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
        log_path=output_dir / "trivial_app.log",
        cpus=pinning.app_cpus if pinning.enabled else None,
        env=environment,
    )
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/", server)
        progress.begin("load generator calibration (trivial endpoint)", duration_s)
        prefix = output_dir / "calibration"
        run = run_locust(
            locust_command(
                host=f"http://127.0.0.1:{port}",
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
    finally:
        stop_process(server)
    return {
        "rps": round(run.rps, 1),
        "requests": run.requests,
        "failures": run.failures,
        "duration_s": round(run.elapsed_s, 2),
        "locust_cpu_warnings": run.cpu_warnings,
        "locust_cpu_percent": run.cpu_percent,
    }


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
