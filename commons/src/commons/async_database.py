"""The async stack of the `async def` routes (commons/async_routes.py): an AsyncEngine over
psycopg 3's async mode on the same database URL, its sessions, and their dependency.

Bounded as the sync engine is (commons/hardening/database_deadline.py): every checkout gets the
request's deadline and a watchdog, connections are opened within it, and the statement count
(commons/statement_count.py) listens to it too. Its pool is its own, of the same size, and
opens nothing until an async route asks: the database slots bound the connections in use in both
pools together, but a process that served both kinds of route keeps up to twice as many open."""

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from commons.config import Settings
from commons.hardening.database_deadline import bound_database_waits, check_deadline


def create_async_database_engine(settings: Settings) -> AsyncEngine:
    engine = create_async_engine(
        settings.database_url,
        pool_size=settings.pool_size,
        max_overflow=settings.max_overflow,
        pool_timeout=settings.database_timeout_s,
        connect_args={"options": "-c timezone=UTC"},  # as the sync engine's
    )
    bound_database_waits(engine.sync_engine, settings.database_timeout_s)
    return engine


def create_async_session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


async def get_async_db(request: Request) -> AsyncIterator[AsyncSession]:
    """One async session per request (counted, as get_db's are)."""
    check_deadline()
    session: AsyncSession = request.app.state.async_session_factory()
    request.app.state.statement_count.count_session()
    try:
        yield session
    finally:
        await close_async_session(session)


async def close_async_session(session: AsyncSession) -> None:
    """Close, and never fail (as commons/database.py's close_session)."""
    try:
        await session.close()
    except DBAPIError:
        await session.invalidate()


AsyncSessionDep = Annotated[AsyncSession, Depends(get_async_db)]
