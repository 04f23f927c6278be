"""What the scale mode measures: each arm in its own schema idiom, and as variants of the same
app: for the arms whose models are Pydantic 2's, `defer_build=True`; on request, every route
declared on the app itself (no APIRouter, no include_router); and the shape's own variants
(the union's members discriminated, the chain's references backward only)."""

from dataclasses import dataclass, replace

from loadtest.lab.arms import BASELINE, arm_named

DEFER_SUFFIX = "+defer_build"
FLAT_SUFFIX = "+flat"


def idiom_of(arm: str) -> str:
    """The schema idiom of the arm's code: app_v1's (Pydantic 1, also on pydantic.v1) or
    app_v2's."""
    return "v1" if arm_named(arm).package == "app_v1" else "v2"


@dataclass(frozen=True)
class Subject:
    arm: str
    defer_build: bool = False
    flat: bool = False
    variant: str | None = None  # one of the shape's variants

    @property
    def key(self) -> str:
        """In results.json and the tables: the arm's name, then `+<variant>`, `+defer_build`,
        `+flat` for what differs from the arm's own app."""
        return (
            self.arm
            + (f"+{self.variant}" if self.variant else "")
            + (DEFER_SUFFIX if self.defer_build else "")
            + (FLAT_SUFFIX if self.flat else "")
        )

    @property
    def idiom(self) -> str:
        return idiom_of(self.arm)


def plan_subjects(
    apps: tuple[str, ...],
    defer_build: bool,
    flat: bool = False,
    variants: tuple[str, ...] = (),
) -> list[Subject]:
    subjects = []
    for arm in apps:
        for variant in (None, *variants):
            subjects.append(Subject(arm, variant=variant))
            if defer_build and idiom_of(arm) == "v2":
                subjects.append(Subject(arm, defer_build=True, variant=variant))
            if flat:
                subjects.append(Subject(arm, flat=True, variant=variant))
    return subjects


def comparisons(subjects: list[Subject]) -> list[tuple[str, str]]:
    """(subject, reference) for every ratio: each subject over v1 in the same shape variant,
    where that ran, and each variant over the same arm without it."""
    keys = {subject.key for subject in subjects}
    pairs = []
    for subject in subjects:
        baseline = Subject(BASELINE, variant=subject.variant).key
        if subject.key != baseline and baseline in keys:
            pairs.append((subject.key, baseline))
    for subject in subjects:
        for plain in (
            replace(subject, defer_build=False),
            replace(subject, flat=False),
            replace(subject, variant=None),
        ):
            if plain != subject and plain.key in keys:
                pairs.append((subject.key, plain.key))
    return list(dict.fromkeys(pairs))  # a variant of v1 is over v1 once
