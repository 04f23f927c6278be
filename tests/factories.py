"""Small factories for test data."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any


@dataclass
class PostData:
    """Duck-typed CRUD input, like a PostIn of either Pydantic major."""

    title: str = "A title"
    content: str = "Some content"
    published_at: datetime = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)


def post_body(**overrides: Any) -> dict[str, Any]:
    """A valid JSON body for POST/PUT /posts."""
    body = {"title": "A title", "content": "Some content", "published_at": "2024-01-01T12:00:00Z"}
    body.update(overrides)
    return body


def past_moment() -> datetime:
    return datetime.now(UTC) - timedelta(days=1)


def future_moment() -> datetime:
    return datetime.now(UTC) + timedelta(days=365)
