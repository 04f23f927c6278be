"""Start one of the lab's apps (fresh process, its own locked environment) and read its /health:
the lab's arm as a Service (lab/services.py), started the way every arm is."""

from pathlib import Path

from commons import HTTP_PROTOCOL
from loadtest.lab.arms import arm_named, arm_python
from loadtest.lab.paths import REPOSITORY_ROOT
from loadtest.lab.services import RunningApp, Service, local_url, start_service

__all__ = ["RunningApp", "app_command", "lab_service", "start_app", "uvicorn_arguments"]
HEALTH_PATH = "/health"


def uvicorn_arguments(name: str, port: int, workers: int) -> list[str]:
    # Access logs are off: they would cost every arm the same CPU and measure logging, not
    # Pydantic.
    return [
        arm_named(name).module,
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


def lab_service(name: str, port: int, workers: int) -> Service:
    """The registry's arm as a service: what examples/lab.toml declares for it too."""
    return Service(
        name=name,
        label=arm_named(name).label,
        command=tuple(app_command(name, port, workers)),
        port=port,
        base_url=local_url(port),
        health_path=HEALTH_PATH,
        cwd=REPOSITORY_ROOT,
        log_name=arm_named(name).log_name,
    )


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
    return start_service(
        lab_service(name, port, workers),
        log_path=log_path,
        environment={**environment, "DATABASE_URL": database_url},
        cpus=cpus,
        timeout_s=timeout_s,
        poll_s=poll_s,
        command=command,
    )
