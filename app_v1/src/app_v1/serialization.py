"""The ladder's Pydantic 1 calls (commons/ladder.py): parse_obj, construct, .json()."""

from datetime import UTC, datetime
from typing import Any

from app_v1.schemas import PostOut, PostsOut
from commons.input_rules import to_utc
from commons.routes import PydanticCalls


def validate(posts: list[Any]) -> PostsOut:
    """What FastAPI does with a returned {"posts": [...]}: orm_mode reads each by attribute."""
    return PostsOut.parse_obj({"posts": posts})


def construct(posts: list[Any]) -> PostsOut:
    """No validation, so no validator runs either: is_published is computed here."""
    now = datetime.now(UTC)
    return PostsOut.construct(
        posts=[
            PostOut.construct(
                id=post.id,
                published_at=post.published_at,
                updated_at=post.updated_at,
                title=post.title,
                content=post.content,
                is_published=to_utc(post.published_at) <= now,
            )
            for post in posts
        ]
    )


def dump_json(model: PostsOut) -> str:
    """Compact like FastAPI's JSONResponse (json.dumps with Pydantic's encoder; non-ASCII
    characters escaped, which JSONResponse does not do: the ladder's posts are ASCII)."""
    return model.json(separators=(",", ":"))


CALLS = PydanticCalls(validate=validate, construct=construct, dump_json=dump_json)
