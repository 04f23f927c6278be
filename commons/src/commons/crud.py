"""CRUD on posts: keyword-only functions that take a session and return ORM objects."""

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from commons.input_rules import to_utc
from commons.models import Post

# posts.id is a PostgreSQL `integer`; anything outside cannot exist, so it is simply not found.
POST_ID_MIN = -(2**31)
POST_ID_MAX = 2**31 - 1


class PostInput(Protocol):
    """What create/update need: any object with these attributes (a PostIn of either major)."""

    title: str
    content: str
    published_at: datetime


def list_posts(
    *, session: Session, limit: int, offset: int, newest_first: bool = False
) -> Sequence[Post]:
    published_at = Post.published_at.desc() if newest_first else Post.published_at.asc()
    post_id = Post.id.desc() if newest_first else Post.id.asc()
    statement = (
        select(Post)
        .where(Post.is_deleted.is_(False))
        .order_by(published_at, post_id)
        .limit(limit)
        .offset(offset)
    )
    return session.scalars(statement).all()


def get_post(*, session: Session, post_id: int) -> Post | None:
    """The post, or None when it does not exist or was (soft) deleted."""
    if not POST_ID_MIN <= post_id <= POST_ID_MAX:
        return None
    post = session.get(Post, post_id)
    if post is None or post.is_deleted:
        return None
    return post


def create_post(*, session: Session, post_in: PostInput) -> Post:
    post = Post(
        title=post_in.title,
        content=post_in.content,
        published_at=to_utc(post_in.published_at),
    )
    session.add(post)
    session.commit()
    return post


def update_post(*, session: Session, post: Post, post_in: PostInput) -> Post:
    post.title = post_in.title
    post.content = post_in.content
    post.published_at = to_utc(post_in.published_at)
    # Bump even when nothing changed: a PUT is a write, and SQLAlchemy skips no-op UPDATEs.
    post.updated_at = func.now()
    session.commit()
    return post


def delete_post(*, session: Session, post: Post) -> None:
    """Soft delete: the row stays, but reads no longer see it."""
    post.is_deleted = True
    session.commit()
