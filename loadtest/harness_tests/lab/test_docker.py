"""docker-compose.yml and the Dockerfiles agree with the code (no Docker engine runs here)."""

import re
import shlex
from pathlib import Path

import pytest
import yaml

from loadtest.cli import MODES
from loadtest.lab.arms import ARMS
from loadtest.lab.docker import compose_database_url, parse_memory_usage
from loadtest.lab.paths import REPOSITORY_ROOT
from loadtest.modes.up.settings import LOCUST_WEB_PORT

COMPOSE = yaml.safe_load((REPOSITORY_ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
APP_DOCKERFILES = {
    name: REPOSITORY_ROOT / arm.environment / "Dockerfile" for name, arm in ARMS.items()
}
LOADTEST_DOCKERFILE = REPOSITORY_ROOT / "loadtest" / "Dockerfile"


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n\s*", " ", dockerfile.read_text())
    pairs = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, rest = line.strip().partition(" ")
            pairs.append((keyword.upper(), rest.strip()))
    return pairs


def arguments_of(dockerfile: Path, keyword: str) -> list[str]:
    return [rest for instruction, rest in instructions(dockerfile) if instruction == keyword]


def test_compose_describes_db_apps_dataset_and_locust() -> None:
    apps = {arm.environment for arm in ARMS.values()}
    assert set(SERVICES) == {"db", *apps, "dataset", "locust-master", "locust-worker"}


def test_db_is_pinned_healthchecked_and_local_only() -> None:
    db = SERVICES["db"]
    assert re.fullmatch(r"postgres:\d+\.\d+", db["image"])
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    for variable in ("POSTGRES_USER", "POSTGRES_PASSWORD", "POSTGRES_DB"):
        assert re.fullmatch(r"\$\{" + variable + r":-\w+\}", db["environment"][variable])


def test_every_published_port_is_on_loopback_only() -> None:
    for name, service in SERVICES.items():
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:"), (name, port)


@pytest.mark.parametrize("app_name", sorted(ARMS))
def test_apps_match_their_code(app_name: str) -> None:
    arm = ARMS[app_name]
    service = SERVICES[arm.environment]
    port = arm.port
    assert service["build"] == {"context": ".", "dockerfile": f"{arm.environment}/Dockerfile"}
    assert service["depends_on"] == {"db": {"condition": "service_healthy"}}
    assert service["ports"] == [f"127.0.0.1:{port}:{port}"]
    # commons.config reads DATABASE_URL; it must point at the db service.
    assert "@db:5432/" in service["environment"]["DATABASE_URL"]
    dockerfile = APP_DOCKERFILES[app_name]
    [command] = arguments_of(dockerfile, "CMD")
    assert f'"{arm.module}"' in command and f'"{port}"' in command
    package = arm.package
    assert (REPOSITORY_ROOT / f"{package}/src/{package}/main.py").exists()
    [healthcheck] = arguments_of(dockerfile, "HEALTHCHECK")
    assert f"http://127.0.0.1:{port}/health" in healthcheck
    assert arguments_of(dockerfile, "EXPOSE") == [str(port)]


def test_every_app_gets_identical_resources_and_images() -> None:
    v1 = SERVICES["app_v1"]
    assert v1["deploy"]["resources"]["limits"].keys() >= {"cpus", "memory"}
    v1_bases = arguments_of(APP_DOCKERFILES["v1"], "FROM")
    assert all(re.match(r"python:3\.11\.\d+-slim", base) for base in v1_bases)
    for name, arm in ARMS.items():
        assert SERVICES[arm.environment]["deploy"] == v1["deploy"], name
        assert arguments_of(APP_DOCKERFILES[name], "FROM") == v1_bases, name


@pytest.mark.parametrize(
    ("dockerfile", "project"),
    [
        *((APP_DOCKERFILES[name], arm.environment) for name, arm in ARMS.items()),
        (LOADTEST_DOCKERFILE, "loadtest"),
    ],
)
def test_images_install_the_locked_versions_without_dev_dependencies(dockerfile, project) -> None:
    runs = " ".join(arguments_of(dockerfile, "RUN"))
    assert f"uv sync --frozen --no-dev --no-editable --compile-bytecode --project {project}" in runs
    copies = arguments_of(dockerfile, "COPY")
    assert any(f"{project}/uv.lock" in copy for copy in copies)
    for copy in copies:
        words = [word for word in shlex.split(copy) if not word.startswith("--")]
        if "--from=build" in copy:
            continue
        for source in words[:-1]:
            assert (REPOSITORY_ROOT / source).exists(), f"{dockerfile.name}: COPY {source}"
    users = arguments_of(dockerfile, "USER")
    assert users and users[-1] not in ("root", "0")


def test_locust_services_use_the_harness_locustfile() -> None:
    master, worker = SERVICES["locust-master"], SERVICES["locust-worker"]
    for service in (master, worker):
        assert service["build"]["dockerfile"] == "loadtest/Dockerfile"
    assert master["ports"] == [f"127.0.0.1:{LOCUST_WEB_PORT}:{LOCUST_WEB_PORT}"]
    assert "--master" in master["command"] and "--worker" in worker["command"]
    assert worker["command"][worker["command"].index("--master-host") + 1] == "locust-master"
    environment = " ".join(arguments_of(LOADTEST_DOCKERFILE, "ENV"))
    locustfile = re.search(r"LOCUST_LOCUSTFILE=/lab/(\S+)", environment).group(1)
    assert (REPOSITORY_ROOT / locustfile).exists()


def test_dataset_service_runs_a_mode_the_runner_has() -> None:
    command = SERVICES["dataset"]["command"]
    assert command[:3] == ["python", "-m", "loadtest"]
    assert command[3:] == ["dataset"] and "dataset" in MODES


def test_runner_reaches_the_db_service_with_compose_defaults() -> None:
    db = SERVICES["db"]
    [published] = db["ports"]
    assert published == "127.0.0.1:${DB_PORT:-55432}:5432"
    assert compose_database_url() == "postgresql://lab:lab@127.0.0.1:55432/lab"


@pytest.mark.parametrize(
    ("text", "mib"),
    [("85.3MiB / 512MiB", 85.3), ("1.5GiB / 2GiB", 1536.0), ("512KiB / 1GiB", 0.5)],
)
def test_parse_memory_usage_reads_docker_stats(text: str, mib: float) -> None:
    assert parse_memory_usage(text) == mib
