"""What commons ships: served code with no Pydantic in it, and the probes kept apart (neither
imported by the apps nor installed in their images)."""

import ast
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from commons.arms import ARMS

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
COMMONS = REPOSITORY_ROOT / "commons" / "src" / "commons"


def imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return modules


def served_modules() -> list[Path]:
    """commons proper and the apps' own code: everything an app imports when it serves."""
    commons_proper = [path for path in COMMONS.rglob("*.py") if "probes" not in path.parts]
    apps = {arm.package for arm in ARMS.values()}
    app_code = [path for package in apps for path in REPOSITORY_ROOT.glob(f"*/src/{package}/*.py")]
    return commons_proper + app_code


def test_commons_proper_imports_no_pydantic() -> None:
    for path in COMMONS.rglob("*.py"):
        if "probes" in path.parts:
            continue
        pydantic = {m for m in imported_modules(path) if m.split(".")[0].startswith("pydantic")}
        assert not pydantic, f"{path.relative_to(REPOSITORY_ROOT)} imports {pydantic}"


def test_no_served_module_imports_a_probe() -> None:
    for path in served_modules():
        probes = {m for m in imported_modules(path) if m.startswith("commons.probes")}
        assert not probes, f"{path.relative_to(REPOSITORY_ROOT)} imports {probes}"


def exported(environment: str, *options: str) -> set[str]:
    """The packages `uv export` names for the environment's lock, with those options."""
    text = subprocess.run(
        ["uv", "export", "--frozen", "--no-hashes", "--project", environment, *options],
        cwd=REPOSITORY_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line.split("==")[0].lower() for line in text.splitlines() if "==" in line}


def probe_libraries() -> set[str]:
    project = tomllib.loads((REPOSITORY_ROOT / "commons" / "pyproject.toml").read_text())
    requirements = project["project"]["optional-dependencies"]["probes"]
    return {re.split(r"[=<>~!\[ ]", requirement)[0].lower() for requirement in requirements}


@pytest.mark.skipif(shutil.which("uv") is None, reason="needs uv (./scripts/run_tests.sh has it)")
@pytest.mark.parametrize("environment", sorted({arm.environment for arm in ARMS.values()}))
def test_app_images_carry_no_library_only_the_probes_use(environment: str) -> None:
    assert probe_libraries() == {"ujson", "msgspec"}
    # What docker/Dockerfile installs (uv sync --no-dev), and what ./test.sh syncs for the probes.
    assert not exported(environment, "--no-dev") & probe_libraries()
    assert probe_libraries() <= exported(environment, "--no-dev", "--group", "probes")


@pytest.mark.skipif(shutil.which("uv") is None, reason="needs uv (./scripts/run_tests.sh has it)")
@pytest.mark.parametrize("environment", sorted({arm.environment for arm in ARMS.values()}))
def test_gunicorn_is_in_each_arm_for_the_workers_mode_and_never_in_its_image(
    environment: str,
) -> None:
    """gunicorn and its uvicorn worker import the app (`./test.sh workers`), so each arm has
    them, in its `workers` group: ./test.sh syncs it, the app image (no groups) leaves it out."""
    servers = {"gunicorn", "uvicorn-worker"}
    assert servers <= exported(environment, "--no-dev", "--group", "workers")
    assert not exported(environment, "--no-dev") & servers
