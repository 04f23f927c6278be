"""The arms' locked environments differ only where the experiment says they do."""

import tomllib
from pathlib import Path

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
# FastAPI is what v2-latest moves; Starlette and FastAPI's new dependencies come with it.
MOVED_WITH_FASTAPI = {"fastapi", "starlette"}


def locked_versions(project: str) -> dict[str, str]:
    lock = tomllib.loads((REPOSITORY_ROOT / project / "uv.lock").read_text())
    return {
        package["name"]: package["version"]
        for package in lock["package"]
        if package.get("source", {}).get("registry")  # the project's own packages are editable
    }


def test_v2_latest_locks_the_same_versions_as_v2_except_fastapi() -> None:
    v2, latest = locked_versions("app_v2"), locked_versions("app_v2_latest")
    assert {"pydantic", "pydantic-core", "uvicorn", "sqlalchemy"} <= v2.keys()
    changed = {name for name in v2.keys() & latest.keys() if v2[name] != latest[name]}
    assert changed <= MOVED_WITH_FASTAPI, changed
    assert "fastapi" in changed
    assert v2.keys() <= latest.keys(), "v2-latest lost a package v2 has"


def test_v1_and_v2_lock_the_same_fastapi() -> None:
    assert locked_versions("app_v1")["fastapi"] == locked_versions("app_v2")["fastapi"]


def test_v2_latest_has_no_code_of_its_own() -> None:
    """One copy of the app: v2-latest runs app_v2's module from its own environment."""
    project = tomllib.loads((REPOSITORY_ROOT / "app_v2_latest/pyproject.toml").read_text())
    assert project["tool"]["uv"]["package"] is False
    assert project["tool"]["uv"]["sources"]["app-v2"]["path"] == "../app_v2"
    assert not (REPOSITORY_ROOT / "app_v2_latest" / "src").exists()


# Pydantic 2 brings pydantic-core and its own small dependencies along.
MOVED_WITH_PYDANTIC_2 = {"pydantic", "pydantic-core", "annotated-types", "typing-inspection"}


def test_v1_shim_locks_v1s_versions_except_pydantic_which_is_v2s() -> None:
    v1, shim, v2 = (locked_versions(project) for project in ("app_v1", "app_v1_shim", "app_v2"))
    changed = {name for name in v1.keys() & shim.keys() if v1[name] != shim[name]}
    assert changed == {"pydantic"}, changed
    assert shim.keys() - v1.keys() <= MOVED_WITH_PYDANTIC_2, shim.keys() - v1.keys()
    assert v1.keys() <= shim.keys(), "v1-shim lost a package v1 has"
    assert shim["pydantic"] == v2["pydantic"] and shim["fastapi"] == v1["fastapi"]


def test_v1_shim_has_no_code_of_its_own() -> None:
    """One copy of the Pydantic 1 app: v1-shim runs app_v1's module from its own environment."""
    project = tomllib.loads((REPOSITORY_ROOT / "app_v1_shim/pyproject.toml").read_text())
    assert project["tool"]["uv"]["package"] is False
    assert project["tool"]["uv"]["sources"]["app-v1"]["path"] == "../app_v1"
    assert not (REPOSITORY_ROOT / "app_v1_shim" / "src").exists()


def test_the_versions_series_ends_on_the_pydantic_app_v2_locks() -> None:
    """The versions mode's last minor is the lab's own v2 (commons/arms.py says which Pydantic
    that is, for the series' labels): the lock and the registry agree."""
    from commons.arms import LAB_V2_PYDANTIC, PYDANTIC_MINORS

    assert locked_versions("app_v2")["pydantic"] == LAB_V2_PYDANTIC
    assert list(PYDANTIC_MINORS.items())[-1] == (".".join(LAB_V2_PYDANTIC.split(".")[:2]), "v2")


def test_the_fastapi_lines_start_from_app_v2s_and_end_on_v2_latests() -> None:
    from commons.arms import FASTAPI_LINES, FASTAPI_SERIES

    assert FASTAPI_SERIES[0] == "v2" and FASTAPI_SERIES[-1] == "v2-latest"
    first, latest = (
        locked_versions("app_v2")["fastapi"],
        locked_versions("app_v2_latest")["fastapi"],
    )
    lines = [tuple(int(part) for part in fastapi.split(".")) for fastapi, _ in FASTAPI_LINES]
    assert tuple(int(p) for p in first.split(".")) < lines[0]
    assert lines == sorted(lines) and lines[-1] < tuple(int(p) for p in latest.split("."))


def test_each_python_of_the_versions_mode_has_both_majors_over_its_own_v1() -> None:
    from commons.arms import PYENV_PYTHONS, VERSION_ARMS, minor

    by_python: dict[str, set[str]] = {}
    for arm in VERSION_ARMS.values():
        if arm.python is not None:
            by_python.setdefault(arm.python, set()).add(arm.package)
            assert arm.baseline.startswith("v1@py") and arm.baseline.endswith(minor(arm.python))
            assert VERSION_ARMS[arm.baseline].python == arm.python
    assert by_python == {python: {"app_v1", "app_v2"} for python in PYENV_PYTHONS}
