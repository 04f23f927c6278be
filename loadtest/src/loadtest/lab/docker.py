"""`./test.sh --docker`: the same benchmark against the compose stack (docker-compose.yml).

PostgreSQL runs in the `db` service; each cell recreates the app's container (a fresh process)
and reads its memory from the container's own accounting (`docker stats`: no USS there).
"""

import os
import re
import shutil
import subprocess
from contextlib import ExitStack

from loadtest.lab.apps import RunningApp, wait_for_health
from loadtest.lab.arms import ARMS
from loadtest.lab.database import BenchmarkDatabase, prepare_schema
from loadtest.lab.errors import LabError
from loadtest.lab.memory import MemoryReading
from loadtest.lab.paths import REPOSITORY_ROOT

COMPOSE_FILE = REPOSITORY_ROOT / "docker-compose.yml"
UNIT_MIB = {
    "B": 1 / 1024**2,
    "KIB": 1 / 1024,
    "MIB": 1.0,
    "GIB": 1024.0,
    "KB": 1000 / 1024**2,
    "MB": 1000**2 / 1024**2,
    "GB": 1000**3 / 1024**2,
}


def ensure_docker_engine() -> None:
    """One line, and no Docker work at all, where no engine answers."""
    if shutil.which("docker") is None:
        raise LabError(
            "--docker needs the docker command, which is not installed "
            "(plain ./test.sh needs no Docker)"
        )
    try:
        answer = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired:
        answer = None
    if answer is None or answer.returncode != 0 or not answer.stdout.strip():
        raise LabError(
            "--docker: no Docker engine answers (`docker info` failed); "
            "plain ./test.sh needs no Docker"
        )
    plugin = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
    if plugin.returncode != 0:
        raise LabError(
            "--docker needs the Docker Compose plugin (`docker compose`), which is not installed"
        )


def compose(*arguments: str, timeout_s: float = 900) -> str:
    command = ["docker", "compose", "--file", str(COMPOSE_FILE), *arguments]
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout_s, cwd=REPOSITORY_ROOT
        )
    except subprocess.TimeoutExpired:
        raise LabError(f"`docker compose {' '.join(arguments)}` timed out") from None
    if result.returncode != 0:
        last_line = (result.stderr.strip().splitlines() or ["?"])[-1]
        raise LabError(f"`docker compose {' '.join(arguments)}` failed: {last_line}")
    return result.stdout


def compose_database_url() -> str:
    """The db service as the host sees it (published on 127.0.0.1 only)."""
    user = os.environ.get("POSTGRES_USER", "lab")
    password = os.environ.get("POSTGRES_PASSWORD", "lab")
    database = os.environ.get("POSTGRES_DB", "lab")
    port = os.environ.get("DB_PORT", "55432")
    return f"postgresql://{user}:{password}@127.0.0.1:{port}/{database}"


def start_docker_stack(
    stack: ExitStack, apps: tuple[str, ...], ports: dict[str, int]
) -> BenchmarkDatabase:
    """Build the arms' images, start the db service; the arms start one by one later."""
    ensure_docker_engine()
    if any(ports[name] != ARMS[name].port for name in apps):
        published = ", ".join(str(ARMS[name].port) for name in apps)
        raise LabError(f"--docker uses the ports in docker-compose.yml ({published})")
    compose("build", *(ARMS[name].environment for name in apps))
    stack.callback(compose, "down", "--volumes", "--remove-orphans")
    compose("up", "--detach", "--wait", "db")
    database_url = compose_database_url()
    server_version = prepare_schema(database_url)
    return BenchmarkDatabase("docker", database_url, server_version, None)


def start_container_app(name: str, base_url: str) -> RunningApp:
    service = ARMS[name].environment
    # --force-recreate: a fresh process per cell, as in the local harness.
    compose("up", "--detach", "--wait", "--force-recreate", "--no-deps", service)
    container_id = compose("ps", "--quiet", service).strip()
    versions = wait_for_health(base_url, is_alive=lambda: True, timeout_s=60, what=service)
    return RunningApp(
        name,
        base_url,
        versions,
        read_memory=lambda: container_memory(container_id),
        stop=lambda: stop_container(service),
    )


def stop_container(service: str) -> None:
    compose("stop", service)


def container_memory(container_id: str) -> MemoryReading:
    answer = subprocess.run(
        ["docker", "stats", "--no-stream", "--format", "{{.MemUsage}}", container_id],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return MemoryReading(parse_memory_usage(answer.stdout), None)


def parse_memory_usage(text: str) -> float:
    """`85.3MiB / 512MiB` (docker stats) -> 85.3: the container's usage in MiB."""
    match = re.match(r"\s*([\d.]+)\s*([A-Za-z]+)", text)
    if not match or match.group(2).upper() not in UNIT_MIB:
        raise LabError(f"cannot read container memory from docker stats: {text.strip()!r}")
    return round(float(match.group(1)) * UNIT_MIB[match.group(2).upper()], 1)
