"""The payload sweep's Pydantic 2 schemas (commons/payload_routes.py, POST /posts_bulk), in the
same idioms as schemas.py: `@computed_field` for the word count, `from_attributes`."""

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, computed_field

from app_v2.schemas import PostIn, PostOut
from commons.payloads import MAX_BULK_POSTS, word_count


class PostsIn(BaseModel):
    """A bulk body: POST /posts_bulk stores it, POST /payloads/validate only validates it."""

    posts: list[PostIn] = Field(min_length=1, max_length=MAX_BULK_POSTS)


class PostIds(BaseModel):
    ids: list[int]


class ValidatedPosts(BaseModel):
    count: int


class AuthorOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str


class CommentOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    text: str
    created_at: datetime

    @computed_field  # type: ignore[prop-decorator]
    @property
    def word_count(self) -> int:
        return word_count(self.text)


class NestedPostOut(PostOut):
    author: AuthorOut
    comments: list[CommentOut]


class NestedPostsOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    posts: list[NestedPostOut]
