"""The lab's arms, declared once. The harness, the tests, the charts and the scripts' checks all
read this registry: adding an arm is one entry here plus its environment folder (a uv project
with pyproject.toml and uv.lock, which ./test.sh and ./scripts/run_tests.sh sync by themselves).

Not served: the apps never import it. It lives in commons because commons is the one package
every environment of the lab has (the apps', the tests' and the harness's).
"""

from dataclasses import dataclass


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

    @property
    def module(self) -> str:
        """What uvicorn serves."""
        return f"{self.package}.main:app"


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
# Every arm's ratio is over this arm's figure: where a migration starts.
BASELINE = "v1"
