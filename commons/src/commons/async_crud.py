"""The async routes' CRUD (commons/async_routes.py): the same statements as crud.py's, on an
AsyncSession."""

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import raiseload

from commons.crud import PostInput, list_posts_statement, new_post, storable_id, visible
from commons.models import Post


async def list_posts(
    *,
    session: AsyncSession,
    limit: int,
    offset: int,
    newest_first: bool = False,
    with_related: bool = False,
) -> Sequence[Post]:
    """A page of visible posts; `with_related`: their comments and tags loaded with them
    (selectinload), and every other relationship set to raise (raiseload): in async code a
    lazy load cannot run, and would fail as MissingGreenlet while the answer is validated."""
    statement = list_posts_statement(limit, offset, newest_first, with_related)
    if with_related:
        statement = statement.options(raiseload("*"))
    return (await session.scalars(statement)).all()


async def get_post(*, session: AsyncSession, post_id: int) -> Post | None:
    """The post, or None when it does not exist or was (soft) deleted: crud.get_post's."""
    return visible(await session.get(Post, post_id)) if storable_id(post_id) else None


async def create_post(*, session: AsyncSession, post_in: PostInput) -> Post:
    post = new_post(post_in)
    session.add(post)
    await session.commit()
    return post
