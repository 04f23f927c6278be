"""What the scale mode measures: each arm in its own schema idiom, and as variants of the same
app: for the arms whose models are Pydantic 2's, `defer_build=True`; on request, every route
declared on the app itself (no APIRouter, no include_router)."""

from dataclasses import dataclass

from loadtest.lab.arms import ARMS, BASELINE

DEFER_SUFFIX = "+defer_build"
FLAT_SUFFIX = "+flat"
VARIANT_SUFFIXES = (DEFER_SUFFIX, FLAT_SUFFIX)


def idiom_of(arm: str) -> str:
    """The schema idiom of the arm's code: app_v1's (Pydantic 1, also on pydantic.v1) or
    app_v2's."""
    return "v1" if ARMS[arm].package == "app_v1" else "v2"


@dataclass(frozen=True)
class Subject:
    arm: str
    defer_build: bool = False
    flat: bool = False

    @property
    def key(self) -> str:
        """In results.json and the tables: the arm's name, `+defer_build` or `+flat` for a
        variant."""
        return (
            self.arm
            + (DEFER_SUFFIX if self.defer_build else "")
            + (FLAT_SUFFIX if self.flat else "")
        )

    @property
    def idiom(self) -> str:
        return idiom_of(self.arm)


def plan_subjects(apps: tuple[str, ...], defer_build: bool, flat: bool = False) -> list[Subject]:
    subjects = []
    for arm in apps:
        subjects.append(Subject(arm))
        if defer_build and idiom_of(arm) == "v2":
            subjects.append(Subject(arm, defer_build=True))
        if flat:
            subjects.append(Subject(arm, flat=True))
    return subjects


def plain_arm(key: str) -> str | None:
    """The arm a variant's key belongs to (None for an arm's own key)."""
    for suffix in VARIANT_SUFFIXES:
        if key.endswith(suffix):
            return key.removesuffix(suffix)
    return None


def comparisons(keys: list[str]) -> list[tuple[str, str]]:
    """(subject, reference) for every ratio: each subject over v1 where v1 ran, and each
    variant over the same arm without it."""
    pairs = []
    if BASELINE in keys:
        pairs += [(key, BASELINE) for key in keys if key != BASELINE]
    for key in keys:
        if (plain := plain_arm(key)) is not None and plain in keys:
            pairs.append((key, plain))
    return list(dict.fromkeys(pairs))  # a variant of v1 is over v1 once
