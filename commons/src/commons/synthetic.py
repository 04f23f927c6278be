"""In-memory posts for the synthetic endpoint: validation and serialisation without a database.

They are plain slotted objects, not SQLAlchemy instances: building 100 ORM objects costs about
as much as Pydantic 2 spends validating and serialising them, which would blur the comparison.
Pydantic still reads them by attribute (orm_mode / from_attributes), as it reads ORM rows.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

SYNTHETIC_CONTENT = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 4


@dataclass(slots=True)
class SyntheticPost:
    id: int
    created_at: datetime
    updated_at: datetime
    published_at: datetime
    title: str
    content: str
    is_deleted: bool = False


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
