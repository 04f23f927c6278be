"""How fast locust can go on this machine: the same load against a near-free endpoint."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from loadtest.lab.asgi_server import asgi_server
from loadtest.lab.pinning import PinningPlan
from loadtest.lab.progress import ProgressDisplay
from loadtest.load.locust_runs import (
    LOCUSTFILES,
    STOP_TIMEOUT_S,
    locust_command,
    run_locust,
)
from loadtest.load.settings import PairedLoadSettings

CALIBRATION_S = 8.0  # the load generator against a trivial endpoint, before any arm starts


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
