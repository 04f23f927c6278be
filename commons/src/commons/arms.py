"""The lab's arms, declared once. The harness, the tests, the charts and the scripts' checks all
read this registry: adding an arm is one entry here plus its environment folder (a uv project
with pyproject.toml and uv.lock, which ./test.sh and ./scripts/run_tests.sh sync by themselves).

Not served: the apps never import it. It lives in commons because commons is the one package
every environment of the lab has (the apps', the tests' and the harness's).
"""

from dataclasses import dataclass

# Every arm's ratio is over this arm's figure: where a migration starts.
BASELINE = "v1"


@dataclass(frozen=True)
class Arm:
    """One app under test: which code, in which locked environment, on which port."""

    name: str  # in options, output and results.json
    package: str  # the app package it serves (`<package>.main:app`)
    environment: str  # the uv project folder whose .venv runs it; also its compose service
    port: int  # its default port
    colour: str  # in every chart
    label: str  # what makes it differ from the others, in a few words
    default: bool = True  # measured when --apps is not given
    # Another arm it is compared with, besides the baseline (its ratio over that arm's).
    compare_with: str | None = None
    # Packages it moves over its environment's (`name==version`, as uv overrides): a derived
    # arm, its environment built from `environment`'s under .tools/environments/ by the
    # harness (loadtest/lab/derived_environments.py), never served by docker-compose.yml.
    pins: tuple[str, ...] = ()
    # The interpreter a derived arm's environment is built on instead of its environment's:
    # one of pyenv's plain builds (PYENV_PYTHONS), by version.
    python: str | None = None
    # The arm its ratios are over: the baseline, or v1 on the same interpreter.
    baseline: str = BASELINE

    @property
    def derived(self) -> bool:
        """Whether its environment is built by the harness from its environment's."""
        return bool(self.pins or self.python)

    @property
    def module(self) -> str:
        """What uvicorn serves."""
        return f"{self.package}.main:app"

    @property
    def log_name(self) -> str:
        """Its logs' file name: its environment's, or a derived arm's own name."""
        return self.name if self.derived else self.environment


# In the order of the migration path: tables and charts list the arms in this order.
ARMS: dict[str, Arm] = {
    arm.name: arm
    for arm in (
        Arm("v1", "app_v1", "app_v1", 8001, "#4c72b0", "Pydantic 1"),
        # app_v1's code, unchanged, on Pydantic 2's pydantic.v1 (the 1.10 source as pure
        # Python): the halfway step of FastAPI's migration guide. Not in a default run (four
        # arms would pass its 8 minutes): --apps v1,v1-shim,v2 adds it.
        Arm(
            "v1-shim",
            "app_v1",
            "app_v1_shim",
            8004,
            "#c44e52",
            "Pydantic 1 code on Pydantic 2's pydantic.v1",
            default=False,
        ),
        Arm("v2", "app_v2", "app_v2", 8002, "#dd8452", "Pydantic 2"),
        # app_v2's code, unchanged, in an environment that moves only FastAPI to its latest
        # release: over v2, what FastAPI's own upgrade is worth with Pydantic unchanged.
        Arm(
            "v2-latest",
            "app_v2",
            "app_v2_latest",
            8003,
            "#55a868",
            "Pydantic 2, latest FastAPI",
            compare_with="v2",
        ),
    )
}
ARM_NAMES = tuple(ARMS)
DEFAULT_ARMS = tuple(name for name, arm in ARMS.items() if arm.default)
# The Pydantic 2 minors `./test.sh versions` walks, oldest first: the latest patch of each when
# the list was made (2026-11-28), with the pydantic-core it requires. The series ends on the
# lab's own v2 (2.14.3), so its last step lands on the arm every other mode measures.
PYDANTIC_2_MINORS: tuple[tuple[str, str], ...] = (
    ("2.7.4", "2.18.4"),
    ("2.8.2", "2.20.1"),
    ("2.9.2", "2.23.4"),
    ("2.10.6", "2.27.2"),
    ("2.11.10", "2.33.2"),
    ("2.12.5", "2.41.5"),
    ("2.13.5", "2.46.5"),
)
# FastAPI lines the versions mode's --fastapi walks with Pydantic 2.14.3 between app_v2's
# 0.125.0 (the last with Pydantic 1) and v2-latest's: 0.129 (the last before the response
# was serialised in Pydantic's Rust JSON path) and 0.130 (the first with it), each with the
# Starlette it resolves to.
FASTAPI_LINES: tuple[tuple[str, str], ...] = (("0.129.2", "0.52.1"), ("0.130.0", "0.52.1"))
# The Pythons the versions mode's --python walks: pyenv's plain builds (no PGO, no LTO), so no
# step mixes them with Debian's optimised 3.11.2 the lab's own environments run on. None is
# 3.14: Pydantic 1.10 does not work on it (v1.10.24's release notes, pydantic#12263).
PYENV_PYTHONS = ("3.11.7", "3.12.1", "3.13.0")
VERSION_PORTS_FROM = 8010  # the derived arms' ports, in VERSION_ARMS' order


def minor(version: str) -> str:
    """`2.11` of `2.11.10`."""
    return ".".join(version.split(".")[:2])


# Derived arms: app_v2's code and locked environment with Pydantic and pydantic-core moved, or
# FastAPI and Starlette. Measured by the versions mode (not by --apps).
VERSION_ARMS: dict[str, Arm] = {
    arm.name: arm
    for arm in (
        *(
            Arm(
                f"v2@{minor(pydantic)}",
                "app_v2",
                "app_v2",
                VERSION_PORTS_FROM + index,
                # From light to dark orange: v2's own colour is the darkest, at the end.
                f"#{0xF5 - 6 * index:02x}{0xC8 - 10 * index:02x}{0x9A - 10 * index:02x}",
                f"Pydantic {pydantic}",
                default=False,
                pins=(f"pydantic=={pydantic}", f"pydantic-core=={core}"),
            )
            for index, (pydantic, core) in enumerate(PYDANTIC_2_MINORS)
        ),
        *(
            Arm(
                f"fastapi@{minor(fastapi)}",
                "app_v2",
                "app_v2",
                VERSION_PORTS_FROM + len(PYDANTIC_2_MINORS) + index,
                # Between v2's orange and v2-latest's green.
                ("#b59a4a", "#8aa04c")[index % 2],
                f"Pydantic 2, FastAPI {fastapi}",
                default=False,
                pins=(f"fastapi=={fastapi}", f"starlette=={starlette}"),
            )
            for index, (fastapi, starlette) in enumerate(FASTAPI_LINES)
        ),
        # Both majors' code and locked packages on each of pyenv's Pythons, each v2 over the
        # v1 on its own interpreter.
        *(
            Arm(
                f"{major}@py{minor(python)}",
                f"app_{major}",
                f"app_{major}",
                VERSION_PORTS_FROM + len(PYDANTIC_2_MINORS) + len(FASTAPI_LINES) + 2 * index + side,
                # v1's blues and v2's oranges, darker on a newer Python (none v1's or v2's own).
                (("#b4c7e2", "#8ca6d2", "#6485bf"), ("#f3c49c", "#eca874", "#e58c4c"))[side][index],
                f"Pydantic {major[1]} on Python {python} (pyenv's)",
                default=False,
                python=python,
                baseline=f"v1@py{minor(python)}",
            )
            for index, python in enumerate(PYENV_PYTHONS)
            for side, major in enumerate(("v1", "v2"))
        ),
    )
}
# The minors the versions mode walks, oldest first, by minor: the derived arms, then the lab's
# v2, whose Pydantic app_v2/uv.lock pins (tests/test_arm_environments.py keeps the two equal).
LAB_V2_PYDANTIC = "2.14.3"
PYDANTIC_MINORS = {
    **{minor(pydantic): f"v2@{minor(pydantic)}" for pydantic, _ in PYDANTIC_2_MINORS},
    minor(LAB_V2_PYDANTIC): "v2",
}
PYDANTIC_2_SERIES = tuple(PYDANTIC_MINORS.values())
# --python: the v2 app on each of pyenv's Pythons, oldest first (each step's baselines are v1
# on the same two interpreters).
PYTHON_SERIES = tuple(f"v2@py{minor(python)}" for python in PYENV_PYTHONS)
# --fastapi: app_v2's FastAPI, the two lines, and v2-latest's.
FASTAPI_SERIES = (
    "v2",
    *(name for name in VERSION_ARMS if name.startswith("fastapi@")),
    "v2-latest",
)


def arm_named(name: str) -> Arm:
    """A registry arm or a derived one, by name (KeyError for neither)."""
    return ARMS[name] if name in ARMS else VERSION_ARMS[name]
