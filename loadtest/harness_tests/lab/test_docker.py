"""docker-compose.yml, docker/Dockerfile and the Docker scripts agree with the code.

These run without an engine. docker/smoke.sh runs the whole path on a real one (.ci/run).
"""

import json
import os
import re
import shutil
import subprocess
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from loadtest.cli import MODES
from loadtest.lab import docker
from loadtest.lab.arms import ARMS
from loadtest.lab.docker import (
    compose_database_url,
    parse_compose_version,
    parse_memory_usage,
)
from loadtest.lab.errors import LabError
from loadtest.lab.paths import REPOSITORY_ROOT
from loadtest.lab.pinning import plan_pinning
from loadtest.modes.up.settings import LOCUST_WEB_PORT

COMPOSE_FILE = REPOSITORY_ROOT / "docker-compose.yml"
COMPOSE = yaml.safe_load(COMPOSE_FILE.read_text())
SERVICES = COMPOSE["services"]
DOCKERFILE = REPOSITORY_ROOT / "docker" / "Dockerfile"
DOCKER_DIR = REPOSITORY_ROOT / "docker"
OFFICIAL_PYTHON = "python:3.11.7-slim-bookworm"
APP_SERVICES = sorted(arm.environment for arm in ARMS.values())
LOADTEST_SERVICES = ("dataset", "locust-master", "locust-worker")


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n\s*", " ", dockerfile.read_text())
    pairs = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, rest = line.strip().partition(" ")
            pairs.append((keyword.upper(), rest.strip()))
    return pairs


def stage(name: str) -> list[tuple[str, str]]:
    """The instructions of one build stage (FROM ... AS name up to the next FROM)."""
    found: list[tuple[str, str]] = []
    inside = False
    for keyword, rest in instructions(DOCKERFILE):
        if keyword == "FROM":
            inside = rest.endswith(f" AS {name}")
        if inside:
            found.append((keyword, rest))
    assert found, f"no stage {name} in docker/Dockerfile"
    return found


def arguments_of(pairs: list[tuple[str, str]], keyword: str) -> list[str]:
    return [rest for instruction, rest in pairs if instruction == keyword]


def test_compose_describes_db_apps_dataset_and_locust() -> None:
    assert set(SERVICES) == {"db", *APP_SERVICES, *LOADTEST_SERVICES}


def test_compose_file_is_valid_for_the_compose_specification() -> None:
    """The JSON schema Compose v2 validates against (vendored by check-jsonschema)."""
    schema_file = files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json")
    schema = json.loads(schema_file.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = [
        f"{list(error.absolute_path)}: {error.message}" for error in validator.iter_errors(COMPOSE)
    ]
    assert errors == []
    # ... and the schema can fail: a key the specification does not know.
    broken = {**COMPOSE, "services": {**SERVICES, "db": {**SERVICES["db"], "cpu": 1}}}
    assert list(validator.iter_errors(broken))


def test_compose_file_suits_docker_compose_1_29_too() -> None:
    """1.29 rejects a top-level `name:` and ignores deploy limits without --compatibility: the
    project is named in .env, and the limits are `cpus`/`mem_limit`."""
    assert "name" not in COMPOSE
    assert "COMPOSE_PROJECT_NAME=pydantic-lab" in (REPOSITORY_ROOT / ".env").read_text()
    assert all("deploy" not in service for service in SERVICES.values())


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="docker-compose not installed")
def test_docker_compose_1_29_parses_the_file() -> None:
    version = subprocess.run(["docker-compose", "version"], capture_output=True, text=True)
    assert parse_compose_version(version.stdout)[0] == 1, version.stdout  # Compose v1, not v2
    answer = subprocess.run(
        ["docker-compose", "--file", str(COMPOSE_FILE), "config", "--quiet"],
        capture_output=True,
        text=True,
        cwd=REPOSITORY_ROOT,
        timeout=60,
    )
    assert answer.returncode == 0, answer.stderr


def test_db_is_pinned_overridable_healthchecked_and_local_only() -> None:
    db = SERVICES["db"]
    assert re.fullmatch(r"\$\{POSTGRES_IMAGE:-postgres:\d+\.\d+\}", db["image"])
    # Over TCP, as the apps connect: a set-up server answers on the socket before the role exists.
    assert "pg_isready -h 127.0.0.1" in " ".join(db["healthcheck"]["test"])


def test_the_apps_reach_the_db_as_their_role_whose_password_only_env_sets() -> None:
    """The apps' role (made by docker/db/app-role.sh, mounted where both images run it) is not the
    image's superuser, and its password is required from .env, which alone gives it a value."""
    environment = SERVICES["db"]["environment"]
    assert environment["POSTGRES_USER"] == "postgres"
    assert environment["LAB_DB_USER"] == docker.COMPOSE_DB_ROLE != environment["POSTGRES_USER"]
    assert environment["POSTGRES_DB"] == docker.COMPOSE_DB_NAME
    required = r"\$\{LAB_DB_PASSWORD:\?[^}]+\}"
    assert re.fullmatch(required, environment["LAB_DB_PASSWORD"])
    assert SERVICES["db"]["volumes"] == ["./docker/db:/docker-entrypoint-initdb.d:ro"]
    assert sorted(path.name for path in (DOCKER_DIR / "db").iterdir()) == ["app-role.sh"]
    for name in (*APP_SERVICES, "dataset"):
        url = SERVICES[name]["environment"]["DATABASE_URL"]
        assert re.fullmatch(f"postgresql://lab:{required}@db:5432/lab", url), name
    assert "LAB_DB_PASSWORD:-" not in COMPOSE_FILE.read_text()  # no second default
    settings = (REPOSITORY_ROOT / ".env").read_text().splitlines()
    assert [line for line in settings if "PASSWORD=" in line and line[0] != "#"] == [
        "LAB_DB_PASSWORD=lab"
    ]


def test_the_apps_role_is_no_superuser_and_the_superuser_is_refused_over_tcp() -> None:
    script = (DOCKER_DIR / "db" / "app-role.sh").read_text()
    assert "NOSUPERUSER NOCREATEDB NOCREATEROLE" in script
    assert 'ALTER DATABASE :"database" OWNER TO :"role"' in script
    assert 'sed -i "1i host all $POSTGRES_USER all reject" "$PGDATA/pg_hba.conf"' in script
    assert os.access(DOCKER_DIR / "db" / "app-role.sh", os.X_OK)  # the official image runs it


def test_every_published_port_is_on_loopback_only() -> None:
    for name, service in SERVICES.items():
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:"), (name, port)


@pytest.mark.parametrize("app_name", sorted(ARMS))
def test_apps_match_their_code(app_name: str) -> None:
    arm = ARMS[app_name]
    service = SERVICES[arm.environment]
    build = service["build"]
    assert (build["context"], build["dockerfile"], build["target"]) == (
        ".",
        "docker/Dockerfile",
        "app",
    )
    assert build["args"]["PROJECT"] == arm.environment
    assert build["args"]["APP_MODULE"] == arm.module
    assert build["args"]["APP_PORT"] == str(arm.port)
    assert (REPOSITORY_ROOT / arm.environment / "uv.lock").exists()
    assert service["depends_on"] == {"db": {"condition": "service_healthy"}}
    assert service["ports"] == [f"127.0.0.1:{arm.port}:{arm.port}"]
    # commons.config reads DATABASE_URL; it must point at the db service.
    assert "@db:5432/" in service["environment"]["DATABASE_URL"]


def test_the_app_stage_serves_the_module_and_port_it_is_given() -> None:
    app = stage("app")
    [command] = arguments_of(app, "CMD")
    assert command.startswith("exec uvicorn")  # uvicorn is the container's process
    assert '"$APP_MODULE"' in command and '--port "$APP_PORT"' in command
    assert "--http commons.hardening.http_protocol:BoundedHttpToolsProtocol" in command
    [healthcheck] = arguments_of(app, "HEALTHCHECK")
    assert "http://127.0.0.1:${APP_PORT}/health" in healthcheck
    assert arguments_of(app, "EXPOSE") == ["${APP_PORT}"]
    assert "APP_MODULE=${APP_MODULE} APP_PORT=${APP_PORT}" in " ".join(arguments_of(app, "ENV"))
    # Docker's legacy builder (Compose 1.29) runs this stage for the loadtest target too.
    assert arguments_of(app, "RUN") == []


def test_every_app_gets_identical_resources_and_base() -> None:
    apps = [SERVICES[name] for name in APP_SERVICES]
    assert {(app["cpus"], app["mem_limit"]) for app in apps} == {
        ("${APP_CPUS:-1.0}", "${APP_MEMORY:-512M}")
    }
    bases = {app["build"]["args"]["PYTHON_IMAGE"] for app in apps}
    bases |= {SERVICES[name]["build"]["args"]["PYTHON_IMAGE"] for name in LOADTEST_SERVICES}
    assert bases == {f"${{PYTHON_IMAGE:-{OFFICIAL_PYTHON}}}"}
    # The Dockerfile's own default is the same official image, and every stage starts from it.
    [default] = [rest for keyword, rest in instructions(DOCKERFILE) if keyword == "ARG"][:1]
    assert default == f"PYTHON_IMAGE={OFFICIAL_PYTHON}"
    froms = arguments_of(instructions(DOCKERFILE), "FROM")
    assert all(line.startswith(("${PYTHON_IMAGE} AS", "runtime AS")) for line in froms)


def test_images_install_the_locked_versions_without_dev_dependencies() -> None:
    runs = " ".join(arguments_of(stage("build"), "RUN"))
    assert (
        'uv sync --frozen --no-dev --no-editable --compile-bytecode --project "${PROJECT}"' in runs
    )
    assert "pip install --no-cache-dir uv==" in runs
    for image in ("app", "loadtest"):
        users = arguments_of(stage(image), "USER")
        assert users and users[-1] not in ("root", "0"), image


def test_the_build_context_holds_the_projects_and_no_environments() -> None:
    lines = (REPOSITORY_ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line for line in lines if line and not line.startswith("#")]
    assert "*" in patterns and "**/.venv" in patterns
    for included in ("!commons", "!app_*", "!loadtest", "!docker/ca/with-bundle.sh"):
        assert included in patterns
    # Of docker/, the script that lends a build step the CA bundle, never a bundle itself.
    assert [pattern for pattern in patterns if "docker" in pattern] == ["!docker/ca/with-bundle.sh"]
    assert patterns[-1] == "**/*.pem"
    # Every project an image installs is in the context: app_* or loadtest, with its lock.
    for name in (*APP_SERVICES, *LOADTEST_SERVICES):
        project = SERVICES[name]["build"]["args"]["PROJECT"]
        assert re.fullmatch(r"app_\w+|loadtest", project), name
        assert (REPOSITORY_ROOT / project / "uv.lock").exists(), name


def test_locust_services_use_the_harness_locustfile() -> None:
    for name in LOADTEST_SERVICES:
        build = SERVICES[name]["build"]
        assert (build["dockerfile"], build["target"], build["args"]["PROJECT"]) == (
            "docker/Dockerfile",
            "loadtest",
            "loadtest",
        )
    master, worker = SERVICES["locust-master"], SERVICES["locust-worker"]
    assert master["ports"] == [f"127.0.0.1:{LOCUST_WEB_PORT}:{LOCUST_WEB_PORT}"]
    assert "--master" in master["command"] and "--worker" in worker["command"]
    assert worker["command"][worker["command"].index("--master-host") + 1] == "locust-master"
    environment = " ".join(arguments_of(stage("loadtest"), "ENV"))
    locustfile = re.search(r"LOCUST_LOCUSTFILE=/lab/(\S+)", environment).group(1)
    assert (REPOSITORY_ROOT / locustfile).exists()


def test_dataset_service_runs_a_mode_the_runner_has() -> None:
    command = SERVICES["dataset"]["command"]
    assert command[:3] == ["python", "-m", "loadtest"]
    assert command[3:] == ["dataset"] and "dataset" in MODES


def test_runner_reaches_the_db_service_with_compose_defaults(monkeypatch) -> None:
    db = SERVICES["db"]
    [published] = db["ports"]
    assert published == "127.0.0.1:${DB_PORT:-55432}:5432"
    monkeypatch.delenv("LAB_DB_PASSWORD", raising=False)
    monkeypatch.delenv("DB_PORT", raising=False)
    assert compose_database_url() == "postgresql://lab:lab@127.0.0.1:55432/lab"  # .env's


def test_an_exported_password_wins_over_env_as_in_compose(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LAB_DB_PASSWORD", "Qz/v@W")
    monkeypatch.setenv("DB_PORT", "55999")
    assert compose_database_url() == "postgresql://lab:Qz%2Fv%40W@127.0.0.1:55999/lab"
    monkeypatch.delenv("LAB_DB_PASSWORD")
    monkeypatch.setattr(docker, "COMPOSE_ENV_FILE", tmp_path / ".env")
    (tmp_path / ".env").write_text("COMPOSE_PROJECT_NAME=x\n# LAB_DB_PASSWORD=no\n")
    with pytest.raises(LabError, match="^--docker: LAB_DB_PASSWORD is set neither in .env nor"):
        compose_database_url()


@pytest.mark.parametrize(
    ("text", "mib"),
    [("85.3MiB / 512MiB", 85.3), ("1.5GiB / 2GiB", 1536.0), ("512KiB / 1GiB", 0.5)],
)
def test_parse_memory_usage_reads_docker_stats(text: str, mib: float) -> None:
    assert parse_memory_usage(text) == mib


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("Docker Compose version v2.29.7\n", (2, 29, 7)),
        ("docker-compose version 1.29.2, build unknown\n", (1, 29, 2)),
        ("docker: 'compose' is not a docker command.\n", None),
    ],
)
def test_parse_compose_version(text: str, version: tuple[int, ...] | None) -> None:
    assert parse_compose_version(text) == version


def test_stand_in_images_are_never_tagged_as_the_official_ones() -> None:
    answer = subprocess.run(
        [str(DOCKER_DIR / "base" / "build.sh"), "--print-tags"],
        capture_output=True,
        text=True,
        check=True,
    )
    tags = answer.stdout.split()
    assert len(tags) == 2
    for tag in tags:
        repository = tag.split(":")[0]
        assert repository.startswith("pydantic-lab/"), tag
        assert repository not in ("python", "postgres", "library/python", "library/postgres")


def test_base_builder_refuses_an_unknown_option_in_one_line() -> None:
    answer = subprocess.run(
        [str(DOCKER_DIR / "base" / "build.sh"), "--bogus"], capture_output=True, text=True
    )
    assert answer.returncode == 2
    assert answer.stderr.strip().count("\n") == 0 and "--bogus" in answer.stderr


def test_smoke_refuses_an_unknown_option_in_one_line() -> None:
    answer = subprocess.run(
        [str(DOCKER_DIR / "smoke.sh"), "--bogus"], capture_output=True, text=True
    )
    assert answer.returncode == 2
    assert answer.stderr.strip().count("\n") == 0 and "--bogus" in answer.stderr


def smoke_without_docker(smoke: Path, tools: Path) -> subprocess.CompletedProcess[str]:
    """docker/smoke.sh (or a copy), its PATH only the tools it uses before it looks for docker."""
    tools.mkdir(exist_ok=True)
    for tool in ("dirname", "id", "printf", "rm"):
        (tools / tool).symlink_to(shutil.which(tool))
    return subprocess.run(
        [shutil.which("bash"), str(smoke)], capture_output=True, text=True, env={"PATH": str(tools)}
    )


def test_smoke_skips_in_one_line_where_there_is_no_docker(tmp_path: Path) -> None:
    """Exit 77 (skipped), one line saying why, and nothing started."""
    answer = smoke_without_docker(DOCKER_DIR / "smoke.sh", tmp_path)
    assert answer.returncode == 77
    assert answer.stdout.strip().splitlines() == [
        "smoke SKIPPED: the docker command is not installed "
        "(Debian: apt-get install docker.io docker-compose)"
    ]


def test_smoke_removes_a_ca_bundle_an_earlier_run_left_and_says_so(tmp_path: Path) -> None:
    """A run killed with -9 once left docker/ca/ca-bundle.pem behind; the next one removes it
    first thing, in one line, whether or not it can go on."""
    (tmp_path / "docker" / "ca").mkdir(parents=True)
    shutil.copy(DOCKER_DIR / "smoke.sh", tmp_path / "docker" / "smoke.sh")
    (tmp_path / "docker" / "ca" / "ca-bundle.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    answer = smoke_without_docker(tmp_path / "docker" / "smoke.sh", tmp_path / "bin")
    assert answer.returncode == 77
    first, skipped = answer.stdout.strip().splitlines()
    assert first.endswith(
        "] removed docker/ca/ca-bundle.pem, a CA bundle an earlier run left behind "
        "(builds no longer read it)"
    )
    assert skipped.startswith("smoke SKIPPED: the docker command is not installed")
    assert not (tmp_path / "docker" / "ca" / "ca-bundle.pem").exists()


def test_up_healthy_waits_for_the_healthcheck(monkeypatch) -> None:
    states = iter([("running", "starting"), ("running", "starting"), ("running", "healthy")])
    monkeypatch.setattr(docker, "compose", lambda *a, **k: "c0ffee\n" if a[0] == "ps" else "")
    monkeypatch.setattr(docker, "container_state", lambda container_id: next(states))
    monkeypatch.setattr(docker.time, "sleep", lambda seconds: None)
    assert docker.up_healthy("app_v1") == {"app_v1": "c0ffee"}


def test_up_healthy_names_a_service_without_a_container(monkeypatch) -> None:
    monkeypatch.setattr(docker, "compose", lambda *a, **k: "")
    with pytest.raises(LabError, match="^service app_v1 has no container after `compose up`$"):
        docker.up_healthy("app_v1")


def test_up_healthy_says_what_an_exited_container_printed_last(monkeypatch) -> None:
    monkeypatch.setattr(docker, "compose", lambda *a, **k: "c0ffee\n" if a[0] == "ps" else "")
    monkeypatch.setattr(docker, "container_state", lambda container_id: ("exited", ""))
    monkeypatch.setattr(docker, "last_log_line", lambda container_id: "ImportError: no app_v9")
    with pytest.raises(LabError, match="^service app_v1 is exited: ImportError: no app_v9$"):
        docker.up_healthy("app_v1")


def test_a_docker_command_that_hangs_is_one_line() -> None:
    with pytest.raises(LabError, match=r"^`sleep 5 \.\.\.` timed out after 0s$"):
        docker.run_docker(["sleep", "5"], timeout_s=0.2)


def measuring_override(apps: tuple[str, ...] = ("v1", "v2")) -> dict[str, Any]:
    return docker.measuring_terms(apps, plan_pinning(True, {0, 1, 2, 3}))


def test_measured_containers_run_on_the_local_runs_terms() -> None:
    """Pinned as the local run pins (apps on the second half of the CPUs, the database beside
    the load generator on the first), and no healthcheck inside an app while it is measured."""
    services = measuring_override()["services"]
    assert services["db"] == {"cpuset": "0,1"}
    for arm in ("v1", "v2"):
        assert services[ARMS[arm].environment] == {
            "cpuset": "2,3",
            "cpus": 2.0,  # as wide as the cpuset: compose's one-CPU quota must not bind
            "healthcheck": {"disable": True},
        }
    assert set(services) == {"db", "app_v1", "app_v2"}  # only the arms that run


def test_the_measuring_override_is_valid_compose_merged_with_the_file() -> None:
    schema_file = files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json")
    validator = jsonschema.Draft202012Validator(json.loads(schema_file.read_text()))
    override = measuring_override(("v1", "v2", "v2-latest"))
    assert list(validator.iter_errors(override)) == []
    merged = {
        **COMPOSE,
        "services": {
            name: {**service, **override["services"].get(name, {})}
            for name, service in SERVICES.items()
        },
    }
    assert list(validator.iter_errors(merged)) == []


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="docker-compose not installed")
def test_docker_compose_1_29_applies_the_measuring_override(tmp_path: Path) -> None:
    override = tmp_path / "compose.override.json"
    override.write_text(json.dumps(measuring_override()))
    answer = subprocess.run(
        ["docker-compose", f"--file={COMPOSE_FILE}", f"--file={override}", "config"],
        capture_output=True,
        text=True,
        cwd=REPOSITORY_ROOT,
        timeout=60,
    )
    assert answer.returncode == 0, answer.stderr
    merged = yaml.safe_load(answer.stdout)["services"]
    assert merged["app_v1"]["cpuset"] == "2,3" and merged["db"]["cpuset"] == "0,1"
    assert merged["app_v1"]["healthcheck"]["test"] == ["NONE"]  # how Compose writes `disable`
    assert merged["app_v1"]["cpus"] == 2.0  # the override's quota, as wide as its cpuset


def test_the_pinning_line_says_which_terms_the_containers_ran_on() -> None:
    pinned = docker.docker_pinning_note(plan_pinning(True, {0, 1}))
    assert pinned == (
        "app containers on CPU 1 (cpuset, no healthcheck while measured); "
        "locust, the runner and the db container on CPU 0"
    )
    off = docker.docker_pinning_note(plan_pinning(False, {0, 1}))
    assert off.startswith("pinning turned off (--no-pin): compose's own terms")
    alone = docker.docker_pinning_note(plan_pinning(True, {0}))
    assert alone.startswith("not pinned: only 1 CPU available: compose's own terms")


def test_a_containers_pid_counts_only_if_its_cgroup_names_the_container(monkeypatch) -> None:
    """Where the harness runs in another PID namespace, docker inspect's PID is someone else's."""
    own = os.getpid()
    answers = {"id": "0123abcd" * 8}

    def inspect(command: list[str], *args: Any, **kwargs: Any) -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess(command, 0, f"{own} {answers['id']}\n", "")

    monkeypatch.setattr(docker, "run_docker", inspect)
    assert docker.container_pid("svc") is None  # this process's cgroup names no such container
    answers["id"] = Path(f"/proc/{own}/cgroup").read_text().strip().split("/")[-1] or "/"
    if answers["id"] not in ("", "/"):
        assert docker.container_pid("svc") == own
