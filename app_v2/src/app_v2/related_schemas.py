"""The related rows' Pydantic 2 schemas (commons/related_routes.py): a post with its comments
(one-to-many) and tags (many-to-many), read from the ORM's relationships by `from_attributes`;
a comment is the payload sweep's, computed word count included."""

from pydantic import BaseModel, ConfigDict

from app_v2.payload_schemas import CommentOut
from app_v2.schemas import PostOut


class TagOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str


class RelatedPostOut(PostOut):
    comments: list[CommentOut]
    tags: list[TagOut]


class RelatedPostsOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    posts: list[RelatedPostOut]
