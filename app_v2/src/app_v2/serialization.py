"""The ladder's Pydantic 2 calls (commons/ladder.py): model_validate, model_construct,
model_dump_json()."""

from typing import Any

from app_v2.schemas import PostOut, PostsOut
from commons.routes import PydanticCalls


def validate(posts: list[Any]) -> PostsOut:
    """What FastAPI does with a returned {"posts": [...]}: from_attributes reads each post."""
    return PostsOut.model_validate({"posts": posts})


def construct(posts: list[Any]) -> PostsOut:
    """No validation; is_published, a computed field, is still computed when dumped."""
    return PostsOut.model_construct(
        posts=[
            PostOut.model_construct(
                id=post.id,
                published_at=post.published_at,
                updated_at=post.updated_at,
                title=post.title,
                content=post.content,
            )
            for post in posts
        ]
    )


def dump_json(model: PostsOut) -> str:
    """Serialised in pydantic-core (Rust), compact."""
    return model.model_dump_json()


CALLS = PydanticCalls(validate=validate, construct=construct, dump_json=dump_json)
