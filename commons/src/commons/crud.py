"""CRUD on posts: keyword-only functions that take a session and return ORM objects."""

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from sqlalchemy import Select, func, insert, select, update
from sqlalchemy.orm import Session, selectinload

from commons.input_rules import to_utc
from commons.models import Post

# posts.id is a PostgreSQL `integer`; anything outside cannot exist, so it is simply not found.
POST_ID_MIN = -(2**31)
POST_ID_MAX = 2**31 - 1
VISIBLE = Post.is_deleted.is_(False)  # not soft-deleted


class PostInput(Protocol):
    """What create/update need: any object with these attributes (a PostIn of either major)."""

    title: str
    content: str
    published_at: datetime


def list_posts(
    *,
    session: Session,
    limit: int,
    offset: int,
    newest_first: bool = False,
    with_related: bool = False,
) -> Sequence[Post]:
    """A page of visible posts; `with_related`: their comments and tags loaded with them, one
    SELECT per relationship (selectinload), instead of one per post and relationship when the
    answer reads them (the default, lazy loader)."""
    return session.scalars(list_posts_statement(limit, offset, newest_first, with_related)).all()


def list_posts_statement(
    limit: int, offset: int, newest_first: bool = False, with_related: bool = False
) -> Select[Post]:
    """The SELECT of a page of visible posts, ordered by publication time (then id)."""
    published_at = Post.published_at.desc() if newest_first else Post.published_at.asc()
    post_id = Post.id.desc() if newest_first else Post.id.asc()
    statement = (
        select(Post).where(VISIBLE).order_by(published_at, post_id).limit(limit).offset(offset)
    )
    if with_related:
        statement = statement.options(selectinload(Post.comments), selectinload(Post.tags))
    return statement


def storable_id(post_id: int) -> bool:
    """Whether the id fits the posts table's key: one that does not is no post, not an error."""
    return POST_ID_MIN <= post_id <= POST_ID_MAX


def visible(post: Post | None) -> Post | None:
    """The post, or None when it does not exist or was (soft) deleted."""
    return None if post is None or post.is_deleted else post


def get_post(*, session: Session, post_id: int) -> Post | None:
    """The post, or None when it does not exist or was (soft) deleted."""
    return visible(session.get(Post, post_id)) if storable_id(post_id) else None


def create_post(*, session: Session, post_in: PostInput) -> Post:
    post = new_post(post_in)
    session.add(post)
    session.commit()
    return post


def new_post(post_in: PostInput) -> Post:
    return Post(
        title=post_in.title,
        content=post_in.content,
        published_at=to_utc(post_in.published_at),
    )


def create_posts(*, session: Session, posts_in: Sequence[PostInput]) -> list[int]:
    """Insert every post in one transaction (one INSERT ... RETURNING per 1,000 rows, through
    SQLAlchemy's insertmanyvalues): all rows or none. Their ids, in the order given."""
    rows = [
        {
            "title": post_in.title,
            "content": post_in.content,
            "published_at": to_utc(post_in.published_at),
        }
        for post_in in posts_in
    ]
    statement = insert(Post).returning(Post.id, sort_by_parameter_order=True)
    ids = list(session.scalars(statement, rows))
    session.commit()
    return ids


# Update and delete are one statement each, whose WHERE clause holds the condition and whose
# RETURNING says whether it held: under READ COMMITTED, a statement that waited for a concurrent
# change to the row re-checks `NOT is_deleted` on the row as that change left it, so of racing
# DELETEs exactly one matches, and a PUT that comes after a DELETE matches nothing. Every 2xx is
# then exactly one row change. (Reading first and writing after, as the ORM's unit of work does,
# answered 204 to several DELETEs of one post and 200 to PUTs that wrote to a deleted one. A row
# lock, SELECT ... FOR UPDATE, would also be exact, but costs a second round trip.)
def update_post(*, session: Session, post_id: int, post_in: PostInput) -> Post | None:
    """The updated post, or None when it does not exist or was (soft) deleted."""
    if not storable_id(post_id):
        return None
    statement = (
        update(Post)
        .where(Post.id == post_id, VISIBLE)
        .values(
            title=post_in.title,
            content=post_in.content,
            published_at=to_utc(post_in.published_at),
            # Bumped even when nothing else changes: a PUT is a write.
            updated_at=func.now(),
        )
        .returning(Post)
    )
    # populate_existing: a post this session already holds takes the returned values.
    post = session.scalars(statement, execution_options={"populate_existing": True}).one_or_none()
    session.commit()
    return post


def delete_post(*, session: Session, post_id: int) -> bool:
    """Soft delete: the row stays, but reads no longer see it. False when there was no visible
    post to delete."""
    if not storable_id(post_id):
        return False
    statement = (
        update(Post).where(Post.id == post_id, VISIBLE).values(is_deleted=True).returning(Post.id)
    )
    found = session.execute(statement).scalar_one_or_none() is not None
    session.commit()
    return found
