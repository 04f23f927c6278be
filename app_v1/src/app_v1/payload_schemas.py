"""The payload sweep's Pydantic 1.10 schemas (commons/payload_routes.py, POST /posts_bulk), in
the same idioms as schemas.py: `@validator(..., always=True)` for the computed word count,
`orm_mode`, `pydantic.v1` imports."""

from datetime import datetime
from typing import Any

from pydantic.v1 import BaseModel, Field, validator

from app_v1.schemas import PostIn, PostOut
from commons.payloads import MAX_BULK_POSTS, word_count


class PostsIn(BaseModel):
    """A bulk body: POST /posts_bulk stores it, POST /payloads/validate only validates it."""

    posts: list[PostIn] = Field(min_items=1, max_items=MAX_BULK_POSTS)


class PostIds(BaseModel):
    ids: list[int]


class ValidatedPosts(BaseModel):
    count: int


class AuthorOut(BaseModel):
    id: int
    name: str

    class Config:
        orm_mode = True


class CommentOut(BaseModel):
    id: int
    text: str
    created_at: datetime
    word_count: int = 0

    @validator("word_count", always=True)
    def compute_word_count(cls, _value: Any, values: dict[str, Any]) -> int:
        text = values.get("text")
        return 0 if text is None else word_count(text)

    class Config:
        orm_mode = True


class NestedPostOut(PostOut):
    author: AuthorOut
    comments: list[CommentOut]


class NestedPostsOut(BaseModel):
    posts: list[NestedPostOut]

    class Config:
        orm_mode = True
