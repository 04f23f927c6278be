"""`./test.sh --docker`: the same benchmark against the compose stack (docker-compose.yml).

PostgreSQL runs in the `db` service; each cell recreates the app's container (a fresh process).
As root, the harness reads the container's processes as it reads a local app's (RSS and USS of
the process tree, CPU per request, through the PID `docker inspect` gives); otherwise memory is
the container's own accounting (`docker stats`: no USS there) and CPU is not read.

Compose v2 (`docker compose`) is used where it is installed, else Compose 1.28 or newer
(`docker-compose`, Debian's 1.29): the file is valid for both, and the lab waits for the
healthchecks itself, since 1.29 has no `up --wait`.
"""

import json
import os
import re
import shutil
import subprocess
import time
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psutil

from loadtest.lab.arms import ARMS
from loadtest.lab.database import LabDatabase, prepare_schema
from loadtest.lab.errors import LabError
from loadtest.lab.files import write_text_safely
from loadtest.lab.interpreter import build_facts
from loadtest.lab.memory import MemoryReading, read_tree_memory
from loadtest.lab.paths import REPOSITORY_ROOT
from loadtest.lab.pinning import PinningPlan, format_cpus
from loadtest.lab.services import RunningApp, wait_for_health

COMPOSE_FILE = REPOSITORY_ROOT / "docker-compose.yml"
COMPOSE_ENV_FILE = REPOSITORY_ROOT / ".env"
# The db service's role for the apps (not a superuser) and its database (docker/db/app-role.sh).
COMPOSE_DB_ROLE = "lab"
COMPOSE_DB_NAME = "lab"
HEALTHY_TIMEOUT_S = 120
UNIT_MIB = {
    "B": 1 / 1024**2,
    "KIB": 1 / 1024,
    "MIB": 1.0,
    "GIB": 1024.0,
    "KB": 1000 / 1024**2,
    "MB": 1000**2 / 1024**2,
    "GB": 1000**3 / 1024**2,
}


@dataclass(frozen=True)
class Compose:
    command: tuple[str, ...]  # ("docker", "compose") or ("docker-compose",)
    version: tuple[int, ...]

    @property
    def is_v1(self) -> bool:
        return self.version < (2,)


def run_docker(
    command: list[str], timeout_s: float = 30, **options: Any
) -> subprocess.CompletedProcess[str]:
    """A docker or compose command; one that hangs or cannot start is a one-line LabError."""
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, **options)
    except subprocess.TimeoutExpired:
        raise LabError(f"`{' '.join(command[:3])} ...` timed out after {timeout_s:.0f}s") from None
    except OSError as error:
        raise LabError(f"cannot run {command[0]}: {error.strerror}") from None


def parse_compose_version(text: str) -> tuple[int, ...] | None:
    """`Docker Compose version v2.29.7`, `docker-compose version 1.29.2, build unknown`."""
    match = re.search(r"version v?(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(part) for part in match.groups()) if match else None


@cache
def find_compose() -> Compose:
    """Compose v2 if installed, else docker-compose 1.28+ (profiles and service_healthy)."""
    too_old = []
    for command in (("docker", "compose"), ("docker-compose",)):
        if shutil.which(command[0]) is None:
            continue
        answer = run_docker([*command, "version"])
        version = parse_compose_version(answer.stdout) if answer.returncode == 0 else None
        if version is not None and version >= (1, 28, 0):
            return Compose(command, version)
        if version is not None:
            too_old.append(f"{' '.join(command)} {'.'.join(map(str, version))}")
    raise LabError(
        "--docker needs Docker Compose: the plugin (`docker compose`) or docker-compose 1.28 "
        "or newer (Debian: apt-get install docker-compose); "
        + (f"found only {', '.join(too_old)}" if too_old else "neither is installed")
    )


def ensure_docker_engine() -> None:
    """One line, and no Docker work at all, where no engine answers."""
    if shutil.which("docker") is None:
        raise LabError(
            "--docker needs the docker command, which is not installed "
            "(plain ./test.sh needs no Docker)"
        )
    try:
        answer = run_docker(["docker", "info", "--format", "{{.ServerVersion}}"])
    except LabError:
        answer = None
    if answer is None or answer.returncode != 0 or not answer.stdout.strip():
        raise LabError(
            "--docker: no Docker engine answers (`docker info` failed); "
            "plain ./test.sh needs no Docker"
        )
    find_compose()


# The override a --docker run adds to docker-compose.yml for its own stack (measuring_terms),
# or none: compose's own terms.
OVERRIDE: list[Path] = []


def compose_command(*arguments: str) -> list[str]:
    """Compose over docker-compose.yml and the run's override, if any."""
    files = [COMPOSE_FILE, *OVERRIDE]
    return [*find_compose().command, *(f"--file={path}" for path in files), *arguments]


def compose(*arguments: str, timeout_s: float = 900) -> str:
    command = compose_command(*arguments)
    result = run_docker(command, timeout_s, cwd=REPOSITORY_ROOT)
    if result.returncode != 0:
        last_line = (result.stderr.strip().splitlines() or ["?"])[-1]
        raise LabError(f"`compose {' '.join(arguments)}` failed: {last_line}")
    return result.stdout


def build(*services: str) -> None:
    # 1.29 drives Docker's legacy builder, which keeps a failed step's container without this.
    compose("build", *(("--force-rm",) if find_compose().is_v1 else ()), *services)


def container_state(container_id: str) -> tuple[str, str]:
    """(status, health) of a container: ("running", "healthy"), ("exited", "") ..."""
    answer = run_docker(["docker", "inspect", "--format", "{{json .State}}", container_id])
    if answer.returncode != 0:
        return "missing", ""
    state = json.loads(answer.stdout)
    return state.get("Status", ""), (state.get("Health") or {}).get("Status", "")


def last_log_line(container_id: str) -> str:
    """What a failed container printed last (`compose down` removes it, and its logs, later)."""
    answer = run_docker(["docker", "logs", "--tail", "5", container_id])
    lines = (answer.stdout + answer.stderr).strip().splitlines()
    return lines[-1].strip() if lines else "it printed nothing"


def up_healthy(*services: str, recreate: bool = False) -> dict[str, str]:
    """`up --detach` the services and wait for each one's healthcheck (what v2's --wait does);
    returns their container ids. A container that stops or turns unhealthy is an error."""
    flags = ("--force-recreate", "--no-deps") if recreate else ()
    compose("up", "--detach", *flags, *services)
    # --all: a container that exited at once is listed too (Compose v2 lists running ones only).
    containers = {}
    for service in services:
        ids = compose("ps", "--all", "--quiet", service).split()
        if not ids:
            raise LabError(f"service {service} has no container after `compose up`")
        containers[service] = ids[0]
    deadline = time.monotonic() + HEALTHY_TIMEOUT_S
    waiting = dict(containers)
    while waiting:
        for service, container_id in list(waiting.items()):
            status, health = container_state(container_id)
            if status == "running" and health in ("healthy", ""):
                del waiting[service]
            elif status != "running" or health == "unhealthy":
                raise LabError(
                    f"service {service} is {health or status}: {last_log_line(container_id)}"
                )
        if waiting and time.monotonic() > deadline:
            raise LabError(f"{', '.join(waiting)} not healthy within {HEALTHY_TIMEOUT_S}s")
        if waiting:
            time.sleep(0.5)
    return containers


def compose_variable(name: str) -> str | None:
    """A variable as Compose reads it: the environment's, else .env's (KEY=VALUE lines)."""
    if os.environ.get(name):
        return os.environ[name]
    for line in COMPOSE_ENV_FILE.read_text().splitlines():
        key, equals, value = line.strip().partition("=")
        if equals and key == name:
            return value.strip()
    return None


def compose_database_url() -> str:
    """The db service as the host sees it (published on 127.0.0.1 only), as the apps' role,
    whose password LAB_DB_PASSWORD is set in .env (docs/docker.md#the-database)."""
    password = compose_variable("LAB_DB_PASSWORD")
    if not password:
        raise LabError("--docker: LAB_DB_PASSWORD is set neither in .env nor in the environment")
    port = compose_variable("DB_PORT") or "55432"
    return (
        f"postgresql://{COMPOSE_DB_ROLE}:{quote(password, safe='')}"
        f"@127.0.0.1:{port}/{COMPOSE_DB_NAME}"
    )


def measuring_terms(apps: tuple[str, ...], pinning: PinningPlan) -> dict[str, Any]:
    """docker-compose.yml on the local run's terms, as an override: each app's container on the
    app CPUs (cpuset, as the local run pins its apps, with a CPU quota as wide, so it never binds),
    the database on the load side's, and no healthcheck in the apps' containers while they are
    measured (the image's runs a new python every 2 s in the container, about 5% of a CPU; the
    harness asks /health itself). The factor experiment that led here: docs/docker.md."""
    services: dict[str, Any] = {"db": {"cpuset": format_cpus(pinning.load_cpus)}}
    for name in apps:
        services[ARMS[name].environment] = {
            "cpuset": format_cpus(pinning.app_cpus),
            "cpus": float(len(pinning.app_cpus)),  # a quota as wide as the cpuset never binds
            "healthcheck": {"disable": True},
        }
    return {"services": services}


def docker_pinning_note(pinning: PinningPlan) -> str:
    if not pinning.enabled:
        return (
            f"{pinning.note}: compose's own terms, every app container held to one CPU's "
            "time (cpus: 1) on any CPU, beside locust, and healthchecks every 2 s "
            "(docker-compose.yml)"
        )
    return (
        f"app containers on CPU {format_cpus(pinning.app_cpus)} (cpuset, no healthcheck while "
        f"measured); locust, the runner and the db container on CPU "
        f"{format_cpus(pinning.load_cpus)}"
    )


def start_docker_stack(
    stack: ExitStack,
    apps: tuple[str, ...],
    ports: dict[str, int],
    pinning: PinningPlan,
    run_dir: Path,
) -> LabDatabase:
    """Build the arms' images, start the db service; the arms start one by one later (the
    runner has called ensure_docker_engine before anything was written). Pinned, the stack runs
    on the local run's terms (measuring_terms, kept in the run folder as compose.override.json);
    not pinned, on docker-compose.yml's own."""
    if any(ports[name] != ARMS[name].port for name in apps):
        published = ", ".join(str(ARMS[name].port) for name in apps)
        raise LabError(f"--docker uses the ports in docker-compose.yml ({published})")
    OVERRIDE.clear()
    if pinning.enabled:
        override = run_dir / "compose.override.json"  # JSON is YAML: both Composes read it
        write_text_safely(override, json.dumps(measuring_terms(apps, pinning), indent=2) + "\n")
        OVERRIDE.append(override)
        stack.callback(OVERRIDE.clear)
    build(*(ARMS[name].environment for name in apps))
    stack.callback(compose, "down", "--volumes", "--remove-orphans")
    up_healthy("db")
    database_url = compose_database_url()
    server_version = prepare_schema(database_url)
    return LabDatabase("docker", database_url, server_version, None)


def container_interpreter(name: str) -> dict[str, object]:
    """The build the arm's image runs (results.json's host.interpreter under --docker): asked
    in a throwaway container of its image, with no database and no port."""
    service = ARMS[name].environment
    run = compose_command("run", "--rm", "--no-deps", "-T", service)
    try:
        facts = build_facts("python", run=run)
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as error:
        raise LabError(
            f"--docker: cannot ask {service}'s image about its python: {error}"
        ) from None
    return facts | {"where": f"container ({service}'s image)"}


def start_container_app(name: str, base_url: str, log_path: Path) -> RunningApp:
    service = ARMS[name].environment
    # A fresh process per cell, as in the local harness.
    container_id = up_healthy(service, recreate=True)[service]
    versions = wait_for_health(
        f"{base_url}/health", is_alive=lambda: True, timeout_s=60, what=service
    )
    pid = readable_container_pid(container_id)
    return RunningApp(
        name,
        base_url,
        versions,
        read_memory=(
            (lambda: read_tree_memory(pid))
            if pid is not None
            else (lambda: container_memory(container_id))
        ),
        stop=lambda: stop_container(service, container_id, log_path),
        container_pid=pid,
    )


def container_pid(container: str) -> int | None:
    """The container's main process as this machine numbers it (`docker inspect`), if that
    process is the container's here (its cgroup names the container: not so where the harness
    itself runs in another PID namespace)."""
    answer = run_docker(["docker", "inspect", "--format", "{{.State.Pid}} {{.Id}}", container])
    words = answer.stdout.split()
    if answer.returncode != 0 or len(words) != 2 or not words[0].isdigit() or words[0] == "0":
        return None
    pid, full_id = int(words[0]), words[1]
    try:
        cgroups = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return None
    return pid if full_id in cgroups else None


def readable_container_pid(container_id: str) -> int | None:
    """The main process, where its memory (USS included) can be read from here: as root, the
    host reads a container's processes as it reads its own (the local run's measure exactly);
    otherwise None, and memory falls back to `docker stats`, CPU to nothing."""
    pid = container_pid(container_id)
    if pid is None:
        return None
    try:
        read_tree_memory(pid)
    except (psutil.AccessDenied, psutil.NoSuchProcess, PermissionError):
        return None
    return pid


def stop_container(service: str, container_id: str, log_path: Path) -> None:
    """Stop the app's container, keeping what it printed (as the local harness keeps its log)."""
    compose("stop", service)
    answer = run_docker(["docker", "logs", container_id])
    write_text_safely(log_path, answer.stdout + answer.stderr)


def container_memory(container_id: str) -> MemoryReading:
    answer = run_docker(
        ["docker", "stats", "--no-stream", "--format", "{{.MemUsage}}", container_id]
    )
    return MemoryReading(parse_memory_usage(answer.stdout), None)


def parse_memory_usage(text: str) -> float:
    """`85.3MiB / 512MiB` (docker stats) -> 85.3: the container's usage in MiB."""
    match = re.match(r"\s*([\d.]+)\s*([A-Za-z]+)", text)
    if not match or match.group(2).upper() not in UNIT_MIB:
        raise LabError(f"cannot read container memory from docker stats: {text.strip()!r}")
    return round(float(match.group(1)) * UNIT_MIB[match.group(2).upper()], 1)
