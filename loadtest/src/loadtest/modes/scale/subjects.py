"""What the scale mode measures: each arm in its own schema idiom, and, for the arms whose models
are Pydantic 2's, the same app with `defer_build=True`."""

from dataclasses import dataclass

from loadtest.lab.arms import ARMS, BASELINE

DEFER_SUFFIX = "+defer_build"


def idiom_of(arm: str) -> str:
    """The schema idiom of the arm's code: app_v1's (Pydantic 1, also on pydantic.v1) or
    app_v2's."""
    return "v1" if ARMS[arm].package == "app_v1" else "v2"


@dataclass(frozen=True)
class Subject:
    arm: str
    defer_build: bool = False

    @property
    def key(self) -> str:
        """In results.json and the tables: the arm's name, `+defer_build` for the variant."""
        return self.arm + (DEFER_SUFFIX if self.defer_build else "")

    @property
    def idiom(self) -> str:
        return idiom_of(self.arm)


def plan_subjects(apps: tuple[str, ...], defer_build: bool) -> list[Subject]:
    subjects = []
    for arm in apps:
        subjects.append(Subject(arm))
        if defer_build and idiom_of(arm) == "v2":
            subjects.append(Subject(arm, defer_build=True))
    return subjects


def comparisons(keys: list[str]) -> list[tuple[str, str]]:
    """(subject, reference) for every ratio: each subject over v1 where v1 ran, and each
    defer_build variant over the same arm without it."""
    pairs = []
    if BASELINE in keys:
        pairs += [(key, BASELINE) for key in keys if key != BASELINE]
    for key in keys:
        if key.endswith(DEFER_SUFFIX) and (plain := key.removesuffix(DEFER_SUFFIX)) in keys:
            pairs.append((key, plain))
    return pairs
