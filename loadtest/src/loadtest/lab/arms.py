"""The arms as the harness sees them: the registry (commons/arms.py), each arm's interpreter,
the comparisons a set of arms makes, and the rotating orders the paired protocol uses."""

import os
from functools import cache
from pathlib import Path
from typing import TypeVar

from commons.arms import (
    ARM_NAMES,
    ARMS,
    BASELINE,
    DEFAULT_ARMS,
    FASTAPI_LINES,
    FASTAPI_SERIES,
    LAB_V2_PYDANTIC,
    PYDANTIC_2_SERIES,
    PYDANTIC_MINORS,
    PYENV_PYTHONS,
    PYTHON_SERIES,
    VERSION_ARMS,
    VERSION_PORTS_FROM,
    Arm,
    arm_named,
    minor,
)
from loadtest.lab.derived_environments import (
    DerivedEnvironment,
    derive_environment,
    environment_folder,
    uv_program,
)
from loadtest.lab.errors import LabError
from loadtest.lab.paths import REPOSITORY_ROOT

__all__ = [
    "ARMS",
    "ARM_NAMES",
    "BASELINE",
    "DEFAULT_ARMS",
    "FASTAPI_LINES",
    "FASTAPI_SERIES",
    "LAB_V2_PYDANTIC",
    "PYDANTIC_2_SERIES",
    "PYDANTIC_MINORS",
    "PYENV_PYTHONS",
    "PYTHON_SERIES",
    "VERSION_ARMS",
    "VERSION_PORTS_FROM",
    "Arm",
    "arm_named",
]
Item = TypeVar("Item")  # an arm's name, or what the scale mode starts (an arm and a variant)


def arm_python(name: str) -> Path:
    """The interpreter of the arm's own locked environment (not `uv run`: memory and start-up
    are the app's alone); for a derived arm, where derived_environment builds its own (a path
    only: a mode builds the environments it runs before it starts anything)."""
    arm = arm_named(name)
    if arm.derived:
        return derived_python(name)
    return environment_python(arm.environment)


def environment_python(environment: str) -> Path:
    return REPOSITORY_ROOT / environment / ".venv" / "bin" / "python"


@cache
def derived_python(name: str) -> Path:
    arm = arm_named(name)
    folder = environment_folder(
        uv_program(),
        environment_python(arm.environment),
        arm.pins,
        interpreter=interpreter_of(arm),
    )
    return folder / "bin" / "python"


def derived_environment(name: str) -> DerivedEnvironment:
    """A derived arm's environment: its base environment's packages with its pins over them
    (on its own Python, where it names one), found in the cache or built now, and the versions
    it resolved to."""
    arm = arm_named(name)
    return derive_environment(
        environment_python(arm.environment), arm.pins, interpreter=interpreter_of(arm)
    )


def interpreter_of(arm: Arm) -> Path | None:
    """The Python the arm's environment is built on, when it names one: pyenv's build of that
    version (a LabError in one line when this machine has none)."""
    if arm.python is None:
        return None
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    program = root / "versions" / arm.python / "bin" / f"python{minor(arm.python)}"
    if not program.is_file():
        raise LabError(
            f"{arm.name} runs on pyenv's Python {arm.python}, which this machine lacks (no "
            f"{program}): install it (`pyenv install {arm.python}`) or leave out --python"
        )
    return program


def baseline_of(apps: tuple[str, ...]) -> str | None:
    """The arm every ratio is over, when it runs beside another arm."""
    return BASELINE if BASELINE in apps and len(apps) > 1 else None


def comparisons(apps: tuple[str, ...]) -> list[tuple[str, str]]:
    """(arm, reference) for every ratio a run of `apps` reports: each arm over the baseline,
    then each arm over the arm it is also compared with, where both ran."""
    baseline = baseline_of(apps)
    over_baseline = [(arm, baseline) for arm in apps if baseline is not None and arm != baseline]
    extra = [
        (arm, reference)
        for arm in apps
        if (reference := arm_named(arm).compare_with) is not None and reference in apps
    ]
    return over_baseline + extra


def rotations(arms: tuple[Item, ...], count: int) -> list[list[Item]]:
    """Order r is the arms rotated by r: for two arms AB BA AB BA ..., so each arm goes first
    equally often over a multiple of len(arms) orders, and every arm's turn has a turn of each
    other arm within one order of it."""
    size = len(arms)
    return [[arms[(position + shift) % size] for position in range(size)] for shift in range(count)]
