"""The async routes' CRUD (commons/async_crud.py) on a real PostgreSQL through psycopg's async
mode: the same posts as the sync CRUD, and why there is no lazy async route: reading a lazy
relationship in async code raises MissingGreenlet, and the eager read's raiseload("*") turns
any other relationship read into an error at once instead of a hidden query."""

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import InvalidRequestError, MissingGreenlet, StatementError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from commons import async_crud, crud
from commons.async_database import create_async_database_engine, create_async_session_factory
from commons.config import Settings, parse_database_url
from commons.related_rows import load_related_rows
from tests.factories import PostData

Result = TypeVar("Result")


def on_async_session(
    database_url: str, work: Callable[[AsyncSession], Coroutine[Any, Any, Result]]
) -> Result:
    async def run() -> Result:
        engine = create_async_database_engine(
            Settings(parse_database_url(database_url), pool_size=1, max_overflow=0)
        )
        try:
            async with create_async_session_factory(engine)() as session:
                return await work(session)
        finally:
            await engine.dispose()

    return asyncio.run(run())


@pytest.fixture
def posts_with_rows(session: Session) -> list[int]:
    ids = [
        crud.create_post(session=session, post_in=PostData(title=f"post {number}")).id
        for number in range(5)
    ]
    connection = session.connection().connection.driver_connection
    load_related_rows(connection)  # type: ignore[arg-type]
    session.commit()
    return ids


def test_the_async_crud_reads_and_writes_what_the_sync_one_does(
    session: Session, commons_database_url: str, posts_with_rows: list[int]
) -> None:
    async def work(async_session: AsyncSession) -> tuple[list[int], int]:
        posts = await async_crud.list_posts(session=async_session, limit=10, offset=0)
        created = await async_crud.create_post(session=async_session, post_in=PostData())
        return [post.id for post in posts], created.id

    listed, created = on_async_session(commons_database_url, work)
    assert listed == posts_with_rows
    session.expire_all()
    assert crud.get_post(session=session, post_id=created) is not None


def test_a_lazy_relationship_read_in_async_code_is_missing_greenlet(
    commons_database_url: str, posts_with_rows: list[int]
) -> None:
    async def work(async_session: AsyncSession) -> None:
        [post] = await async_crud.list_posts(session=async_session, limit=1, offset=0)
        len(post.comments)  # what a response model's from_attributes would read

    # SQLAlchemy wraps it: "(sqlalchemy.exc.MissingGreenlet) greenlet_spawn has not been called".
    with pytest.raises(StatementError) as raised:
        on_async_session(commons_database_url, work)
    assert isinstance(raised.value.orig, MissingGreenlet)


def test_the_eager_read_loads_its_rows_and_refuses_any_other(
    commons_database_url: str, posts_with_rows: list[int]
) -> None:
    async def work(async_session: AsyncSession) -> list[int]:
        posts = await async_crud.list_posts(
            session=async_session, limit=5, offset=0, with_related=True
        )
        counts = [len(post.comments) + len(post.tags) for post in posts]
        comment = next(comment for post in posts for comment in post.comments)
        with pytest.raises(InvalidRequestError, match="not available due to lazy='raise'"):
            comment.post  # noqa: B018 - a relationship the read did not ask for
        return counts

    counts = on_async_session(commons_database_url, work)
    assert len(counts) == 5 and all(count >= 1 for count in counts)  # every post has a tag


def test_the_engine_is_psycopg_in_async_mode(engine: Engine, commons_database_url: str) -> None:
    async_engine = create_async_database_engine(
        Settings(parse_database_url(commons_database_url), pool_size=1, max_overflow=0)
    )
    assert async_engine.dialect.is_async and not engine.dialect.is_async
    assert async_engine.dialect.driver == engine.dialect.driver == "psycopg"
    asyncio.run(async_engine.dispose())
