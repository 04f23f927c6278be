"""In-memory posts for the synthetic endpoint: validation and serialisation without a database.

They are plain attribute objects, like ORM rows to Pydantic (orm_mode / from_attributes reads
them by attribute), and deliberately neither dataclasses nor dicts: FastAPI runs
`dataclasses.asdict()` (a deep copy of every field) on a returned dataclass before validating it,
which on Pydantic 1 cost about 40% of the whole response and would be measured as Pydantic's.
Nor are they SQLAlchemy instances: building 100 ORM objects costs about as much as Pydantic 2
spends validating and serialising them, which would blur the comparison too.
"""

from datetime import UTC, datetime, timedelta

SYNTHETIC_CONTENT = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 4


class SyntheticPost:
    """The columns of a `Post`, as plain attributes."""

    __slots__ = ("id", "created_at", "updated_at", "published_at", "title", "content", "is_deleted")

    def __init__(
        self,
        *,
        id: int,
        created_at: datetime,
        updated_at: datetime,
        published_at: datetime,
        title: str,
        content: str,
        is_deleted: bool = False,
    ) -> None:
        self.id = id
        self.created_at = created_at
        self.updated_at = updated_at
        self.published_at = published_at
        self.title = title
        self.content = content
        self.is_deleted = is_deleted


def build_synthetic_posts(count: int) -> list[SyntheticPost]:
    """Half published, half scheduled, so both branches of is_published are exercised."""
    now = datetime.now(UTC)
    return [
        SyntheticPost(
            id=number,
            created_at=now,
            updated_at=now,
            published_at=now + timedelta(hours=number if number % 2 == 0 else -number),
            title=f"Synthetic post {number}",
            content=SYNTHETIC_CONTENT,
        )
        for number in range(1, count + 1)
    ]


# The ladder's posts (commons/ladder.py): built once, with fixed moments, so every rung (the
# bytes encoded at start-up included) answers the same posts for as long as the app runs. Odd
# posts were published in 2024, even ones are scheduled for 2121, as in the dataset.
LADDER_POST_COUNT = 100
LADDER_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
LADDER_SCHEDULED = datetime(2121, 1, 1, tzinfo=UTC)


def build_ladder_posts(count: int = LADDER_POST_COUNT) -> list[SyntheticPost]:
    return [
        SyntheticPost(
            id=number,
            created_at=LADDER_EPOCH + timedelta(minutes=number),
            # Microseconds too, so every rung must render them.
            updated_at=LADDER_EPOCH + timedelta(days=1, microseconds=number * 1_237),
            published_at=(LADDER_SCHEDULED if number % 2 == 0 else LADDER_EPOCH)
            + timedelta(hours=number),
            title=f"Ladder post {number}",
            content=SYNTHETIC_CONTENT,
        )
        for number in range(1, count + 1)
    ]
