"""Engine, session factory, the `get_db` dependency and race-safe schema creation."""

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from commons.config import Settings, describe_database_host
from commons.hardening.database_deadline import (
    DatabaseDeadlineExceeded,
    bound_database_waits,
    check_deadline,
    deadline_of,
)
from commons.models import Base
from commons.statement_count import UNCOUNTED

# Any constant works; it only has to be the same in every process creating the schema.
SCHEMA_LOCK_KEY = 0x5079_6C61_6221  # "Pylab!"
# Several workers starting at once queue for the schema lock; a request's deadline is too short.
SCHEMA_CREATION_TIMEOUT_S = 60


class DatabaseUnavailableError(Exception):
    """The database cannot be reached; the message is one line meant for a person."""


def create_database_engine(settings: Settings) -> Engine:
    """An engine whose every wait is bounded by settings.database_timeout_s, and which pings a
    pooled connection before handing it out (so a restarted server costs no request)."""
    engine = create_engine(
        settings.database_url,
        pool_size=settings.pool_size,
        max_overflow=settings.max_overflow,
        pool_timeout=settings.database_timeout_s,
        # connect_timeout is set per connection, from the deadline (bound_database_waits).
        connect_args={
            # Render every timestamp in UTC, whatever the server's own TimeZone setting.
            "options": "-c timezone=UTC",
        },
    )
    bound_database_waits(engine, settings.database_timeout_s)
    return engine


def create_schema(engine: Engine) -> None:
    """Create missing tables; safe when several processes start against one database at once."""
    try:
        with deadline_of(SCHEMA_CREATION_TIMEOUT_S), engine.begin() as connection:
            # CREATE TABLE IF NOT EXISTS still races on the catalog; serialise the creators.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})
            Base.metadata.create_all(connection)
    except DBAPIError as error:
        raise DatabaseUnavailableError(describe_database_error(engine, error)) from None
    except DatabaseDeadlineExceeded:
        raise DatabaseUnavailableError(
            f"cannot use the database at {describe_database_host(engine.url)}: "
            f"no answer within {SCHEMA_CREATION_TIMEOUT_S} s"
        ) from None


def describe_database_error(engine: Engine, error: DBAPIError) -> str:
    reason = str(error.orig).strip().splitlines()[0] if error.orig else type(error).__name__
    return f"cannot use the database at {describe_database_host(engine.url)}: {reason}"


def database_serves_posts(engine: Engine) -> bool:
    """Whether the routes can use the database: connect, within the request's deadline, and
    read the posts table. (`SELECT 1` alone answered while the table could not be read, and
    /health said ok while /posts failed.)"""
    try:
        with engine.connect().execution_options(**UNCOUNTED) as connection:
            connection.execute(text("SELECT 1 FROM posts LIMIT 1"))
    except (SQLAlchemyError, DatabaseDeadlineExceeded):
        return False
    return True


def create_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def get_db(request: Request) -> Iterator[Session]:
    """One session per request, from the factory the app was built with (and counted, for
    statements per request: commons/statement_count.py)."""
    check_deadline()
    session: Session = request.app.state.session_factory()
    request.app.state.statement_count.count_session()
    try:
        yield session
    finally:
        close_session(session)


def close_session(session: Session) -> None:
    """Close, and never fail: this runs after the response has gone out, where an error (the
    rollback on a connection the database dropped) could only break the HTTP connection."""
    try:
        session.close()
    except DBAPIError:
        session.invalidate()  # discards the connection instead of returning it to the pool


SessionDep = Annotated[Session, Depends(get_db)]
