"""The payload sweep's in-memory posts (`./test.sh sweep`, routes in payload_routes.py): flat
ones like every other list, and nested ones with an author and comments, built
deterministically, so every arm answers the same bytes for the same request (is_published
apart, which each arm computes on every answer).

Built once per shape and kept: a request then costs what the schema layer and the framework
cost, not building thousands of Python objects, which would be the same in every arm and blur
the ratio (as the ladder's posts do, commons/ladder.py). Plain attribute objects, read by
orm_mode / from_attributes like ORM rows, never dataclasses (commons/synthetic.py says why).
"""

from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from commons.synthetic import SYNTHETIC_CONTENT, SyntheticPost

# Bounds of the read endpoints, published in OpenAPI: a 422 beyond them.
MAX_PAYLOAD_ITEMS = 5000
DEFAULT_PAYLOAD_ITEMS = 100
MAX_COMMENTS_PER_POST = 10
DEFAULT_COMMENTS_PER_POST = 3
# Bound of a bulk body (POST /posts_bulk, POST /payloads/validate): a 422 beyond it. 1,000
# posts of the sweep's size are about 0.3 MB, inside MAX_BODY_BYTES (1 MiB unless configured);
# a body over that is a 413 whatever its count.
MAX_BULK_POSTS = 1000

PAYLOAD_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
PAYLOAD_SCHEDULED = datetime(2121, 1, 1, tzinfo=UTC)  # even posts: scheduled, not published
COMMENT_TEXT = "A comment of a dozen words, about the length readers tend to write."
AUTHOR_COUNT = 50  # posts share authors, as they do


class PayloadAuthor:
    __slots__ = ("id", "name")

    def __init__(self, *, id: int, name: str) -> None:
        self.id = id
        self.name = name


class PayloadComment:
    __slots__ = ("id", "text", "created_at")

    def __init__(self, *, id: int, text: str, created_at: datetime) -> None:
        self.id = id
        self.text = text
        self.created_at = created_at


class NestedPost(SyntheticPost):
    """A post's columns (SyntheticPost), its author and its comments: depth 2."""

    __slots__ = ("author", "comments")

    def __init__(
        self, *, author: PayloadAuthor, comments: list[PayloadComment], **columns: object
    ) -> None:
        super().__init__(**columns)  # type: ignore[arg-type]
        self.author = author
        self.comments = comments


def post_columns(number: int) -> dict[str, object]:
    """Post `number`'s columns: odd posts published in 2024, even ones scheduled for 2121, and
    microseconds in updated_at, which every arm has to render."""
    return {
        "id": number,
        "created_at": PAYLOAD_EPOCH + timedelta(minutes=number),
        "updated_at": PAYLOAD_EPOCH + timedelta(days=1, microseconds=number * 1_237),
        "published_at": (PAYLOAD_SCHEDULED if number % 2 == 0 else PAYLOAD_EPOCH)
        + timedelta(hours=number),
        "title": f"Payload post {number}",
        "content": SYNTHETIC_CONTENT,
    }


@cache
def flat_posts() -> list[SyntheticPost]:
    """MAX_PAYLOAD_ITEMS flat posts; a request for N answers the first N."""
    return [
        SyntheticPost(**post_columns(number))  # type: ignore[arg-type]
        for number in range(1, MAX_PAYLOAD_ITEMS + 1)
    ]


@cache
def nested_posts(comments_per_post: int) -> list[NestedPost]:
    """MAX_PAYLOAD_ITEMS nested posts with `comments_per_post` comments each (one list per
    count asked for, at most MAX_COMMENTS_PER_POST + 1 lists)."""
    if not 0 <= comments_per_post <= MAX_COMMENTS_PER_POST:
        raise ValueError(f"comments per post must be 0 to {MAX_COMMENTS_PER_POST}")
    authors = [
        PayloadAuthor(id=number, name=f"Author {number}") for number in range(1, AUTHOR_COUNT + 1)
    ]
    return [
        NestedPost(
            author=authors[number % AUTHOR_COUNT],
            comments=[
                PayloadComment(
                    id=number * 100 + index,
                    text=COMMENT_TEXT,
                    created_at=PAYLOAD_EPOCH + timedelta(hours=number, minutes=index),
                )
                for index in range(1, comments_per_post + 1)
            ],
            **post_columns(number),
        )
        for number in range(1, MAX_PAYLOAD_ITEMS + 1)
    ]


def word_count(text: str) -> int:
    """A comment's computed field, in both schema layers."""
    return len(text.split())


def bulk_post(number: int) -> dict[str, Any]:
    """A post of the sweep's bulk bodies, as JSON: like the in-memory ones (about 310 bytes)."""
    return {
        "title": f"Bulk post {number}",
        "content": SYNTHETIC_CONTENT,
        "published_at": "2024-01-01T12:00:00Z",
    }


DATETIME_FIELDS = ("published_at", "updated_at", "created_at")


def as_instants(value: Any) -> Any:
    """A parsed answer with every date-time field an aware datetime: the majors spell UTC
    differently ("Z", "+00:00") but must name the same instants."""
    if isinstance(value, list):
        return [as_instants(item) for item in value]
    if isinstance(value, dict):
        return {
            key: datetime.fromisoformat(item)
            if key in DATETIME_FIELDS and isinstance(item, str)
            else as_instants(item)
            for key, item in value.items()
        }
    return value
