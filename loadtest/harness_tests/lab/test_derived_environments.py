"""Environments derived from an arm's (lab/derived_environments.py, compare's `from`/`with`),
built for real by uv from app_v2's environment into a cache of the test's own: the pins over the
base's packages, the cache reused, the versions recorded, bytecode compiled, and every conflict
refused in one line with nothing left behind. The pins are those app_v2_latest's lock holds
(FastAPI 0.165.0, Starlette 1.10.0), so uv's cache has their wheels after the bootstrap."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from harness_tests.runner import REPOSITORY_ROOT
from loadtest.lab import derived_environments
from loadtest.lab.arms import PYENV_PYTHONS, minor
from loadtest.lab.derived_environments import (
    derive_environment,
    environment_key,
    is_environment_python,
    uv_program,
)
from loadtest.lab.errors import LabError
from loadtest.modes.compare.environments import with_derived_environments
from loadtest.modes.compare.file import read_compare_file
from loadtest.modes.compare.settings import CompareSettings

APP_V2_PYTHON = REPOSITORY_ROOT / "app_v2" / ".venv" / "bin" / "python"
PYENV_ROOT = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
LATEST = ("fastapi==0.165.0", "starlette==1.10.0")


def base_python_version() -> str:
    return subprocess.run(
        [str(APP_V2_PYTHON), "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_the_pins_go_over_the_base_and_the_environment_is_reused(tmp_path: Path) -> None:
    built = derive_environment(APP_V2_PYTHON, LATEST, tmp_path)
    assert built.built
    assert built.python.parent.parent.parent == tmp_path
    assert built.versions == {
        "python": base_python_version(),
        "pydantic": "2.14.3",  # the base's, unchanged
        "pydantic-core": "2.50.4",
        "fastapi": "0.165.0",
        "starlette": "1.10.0",
    }
    site = built.python.parent.parent / "lib"
    assert list(site.glob("python3*/site-packages/fastapi/__pycache__/*.pyc"))  # compiled
    # The base's own code stays an editable install of the same source.
    assert (site.parent / "requirements.txt").read_text().count("-e file://") == 2

    again = derive_environment(APP_V2_PYTHON, tuple(reversed(LATEST)), tmp_path)
    assert not again.built and again.python == built.python  # the pins' order is no change
    assert "reused from the cache" in again.sentence()
    assert "fastapi 0.165.0" in again.sentence()


def test_another_interpreter_gets_the_bases_packages_in_a_folder_of_its_own(
    tmp_path: Path,
) -> None:
    """--python's arms: the base's packages, no pins, on a Python of pyenv's (skipped where this
    machine has none but the base's)."""
    other = next(
        (
            program
            for version in PYENV_PYTHONS
            if (
                program := PYENV_ROOT / "versions" / version / "bin" / f"python{minor(version)}"
            ).is_file()
            and version != base_python_version()
        ),
        None,
    )
    if other is None:
        pytest.skip("no pyenv Python here besides the base's")
    built = derive_environment(APP_V2_PYTHON, (), tmp_path, interpreter=other)
    on_base = derive_environment(APP_V2_PYTHON, (), tmp_path)
    assert built.python.parent.parent != on_base.python.parent.parent
    assert built.versions["python"] == other.parent.parent.name  # pyenv's folder: its version
    assert built.versions["pydantic"] == on_base.versions["pydantic"] == "2.14.3"


def test_a_pin_that_needs_another_package_moved_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(LabError) as caught:
        derive_environment(APP_V2_PYTHON, ("fastapi==0.165.0",), tmp_path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("uv could not install its packages (the base's packages are")
    assert "depends on starlette>=1.6.0" in message
    assert "you require starlette==0.50.0" in message  # the base's, named
    # Nothing half-built is left to be reused (its lock file stays, empty).
    assert [path for path in tmp_path.iterdir() if path.is_dir()] == []


def test_pins_that_contradict_each_other_are_refused(tmp_path: Path) -> None:
    """Overrides replace the pinned packages' requirements on each other too: FastAPI 0.165
    over Starlette 0.50 installs, and would start broken; the check after it refuses it."""
    with pytest.raises(LabError) as caught:
        derive_environment(APP_V2_PYTHON, ("fastapi==0.165.0", "starlette==0.50.0"), tmp_path)
    assert str(caught.value) == (
        "the pins contradict each other: The package `fastapi` requires `starlette>=1.6.0`, "
        "but `0.50.0` is installed"
    )
    assert [path for path in tmp_path.iterdir() if path.is_dir()] == []


def test_a_requirements_file_lists_the_packages_in_place_of_the_bases(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    # Every package pinned at the locked versions, whose wheels uv's cache holds.
    locked = "anyio==4.16.0\nidna==3.20\ntyping-extensions==4.16.0\n"
    requirements.write_text(locked + "starlette==1.10.0\n")
    cache = tmp_path / "cache"
    built = derive_environment(APP_V2_PYTHON, (), cache, requirements=requirements)
    # Only what the file lists (and what it needs): none of app_v2's own packages.
    assert (built.versions["starlette"], built.versions["fastapi"]) == ("1.10.0", None)
    assert built.versions["pydantic"] is None
    # The file's text is part of the key: another text, another environment.
    requirements.write_text(locked + "starlette==0.50.0\n")  # app_v2's: in uv's cache too
    other = derive_environment(APP_V2_PYTHON, (), cache, requirements=requirements)
    assert other.built and other.python != built.python
    assert other.versions["starlette"] == "0.50.0"
    with pytest.raises(LabError, match=r"^cannot read .*absent\.txt"):
        derive_environment(APP_V2_PYTHON, (), cache, requirements=tmp_path / "absent.txt")


def test_an_unfinished_build_is_never_reused(tmp_path: Path) -> None:
    """A folder without its last file (a build killed midway) is built again from nothing."""
    listed = subprocess.run(
        [uv_program(), "pip", "freeze", "--python", str(APP_V2_PYTHON)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    key = environment_key(uv_program(), APP_V2_PYTHON, LATEST, None, listed)
    (tmp_path / key / "bin").mkdir(parents=True)
    (tmp_path / key / "left-over").write_text("from a killed build")
    environment = derive_environment(APP_V2_PYTHON, LATEST, tmp_path)
    assert environment.built and environment.python.parent.parent == tmp_path / key
    assert not (tmp_path / key / "left-over").exists()


def test_an_interrupted_build_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_run_uv = derived_environments.run_uv

    def interrupted(command: list[str], what: str, **options: object) -> str:
        if command[1:3] == ["pip", "install"]:
            raise KeyboardInterrupt  # Ctrl-C while uv installs
        return real_run_uv(command, what, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(derived_environments, "run_uv", interrupted)
    with pytest.raises(KeyboardInterrupt):
        derive_environment(APP_V2_PYTHON, LATEST, tmp_path)
    assert [path for path in tmp_path.iterdir() if path.is_dir()] == []


def test_only_a_virtual_environments_python_can_be_derived_from() -> None:
    assert is_environment_python(APP_V2_PYTHON)
    assert is_environment_python(Path(sys.executable))  # the harness's own environment
    assert not is_environment_python(Path("/bin/sh"))
    assert not is_environment_python(Path("/usr/bin/python3"))  # no pyvenv.cfg above it


def test_a_compare_run_starts_a_derived_arm_on_its_own_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(derived_environments, "CACHE_DIR", tmp_path / "cache")
    path = tmp_path / "compare.toml"
    path.write_text(
        f'[arms.v2]\ncommand = ["{APP_V2_PYTHON}", "-m", "http.server", "{{port}}"]\n'
        "port = 8002\n"
        f'[arms.latest]\nfrom = "v2"\nwith = {list(LATEST)!r}\nport = 8003\n'.replace("'", '"')
        + '[scenarios.read]\npath = "/"\n'
    )
    settings = CompareSettings(file=read_compare_file(path))
    console = Console(record=True, width=200)
    derived = with_derived_environments(settings, console)
    assert derived.file is not None
    latest = derived.file.plan.service("latest")
    assert latest.command[0].startswith(str(tmp_path / "cache"))
    assert latest.command[1:] == ("-m", "http.server", "8003")
    assert derived.file.plan.service("v2") == settings.plan.service("v2")
    environment = derived.file.environments["latest"]
    assert (environment["from"], environment["with"]) == ("v2", list(LATEST))
    assert environment["versions"]["fastapi"] == "0.165.0"
    printed = console.export_text()
    assert (
        "latest: v2's interpreter, v2's packages with fastapi==0.165.0, starlette==1.10.0 over "
        "them" in printed
    )
    assert "fastapi 0.165.0, starlette 1.10.0; built in" in printed

    bad = path.read_text().replace(', "starlette==1.10.0"', "")
    path.write_text(bad)
    with pytest.raises(LabError) as caught:
        with_derived_environments(CompareSettings(file=read_compare_file(path)), console)
    assert str(caught.value).startswith(f"{path}: arms.latest: uv could not install")
