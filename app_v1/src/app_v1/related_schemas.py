"""The related rows' Pydantic 1.10 schemas (commons/related_routes.py): a post with its comments
(one-to-many) and tags (many-to-many), read from the ORM's relationships by `orm_mode`; a
comment is the payload sweep's, computed word count included."""

from pydantic.v1 import BaseModel

from app_v1.payload_schemas import CommentOut
from app_v1.schemas import PostOut


class TagOut(BaseModel):
    id: int
    name: str

    class Config:
        orm_mode = True


class RelatedPostOut(PostOut):
    comments: list[CommentOut]
    tags: list[TagOut]


class RelatedPostsOut(BaseModel):
    posts: list[RelatedPostOut]

    class Config:
        orm_mode = True
