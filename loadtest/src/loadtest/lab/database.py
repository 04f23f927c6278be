"""The database every mode that needs one uses: the embedded PostgreSQL by default, or the server
in DATABASE_URL, in a database of the lab's own."""

import os
from contextlib import ExitStack
from dataclasses import dataclass

import psycopg
from psycopg import sql

from commons.config import (
    ConfigurationError,
    describe_database_host,
    libpq_url,
    parse_database_url,
)
from commons.config import Settings as DatabaseSettings
from commons.database import (
    DatabaseUnavailableError,
    create_database_engine,
    create_schema,
)
from commons.embedded_postgres import start_embedded_postgres
from loadtest.lab.errors import LabError, interrupt_main_with

# Its own database, so DATABASE_URL may point at a server holding real data.
LAB_DATABASE = "pydantic_lab_bench"


@dataclass(frozen=True)
class LabDatabase:
    kind: str  # "embedded", "external" (DATABASE_URL) or "docker" (the compose db service)
    url: str  # libpq form, for psycopg and the apps
    server_version: str
    server_pid: int | None  # embedded only: the postmaster, to pin it


def check_configured_url() -> None:
    """A malformed DATABASE_URL fails now, before a run creates anything (one line)."""
    configured_url = os.environ.get("DATABASE_URL", "").strip()
    if configured_url:
        try:
            parse_database_url(configured_url)
        except ConfigurationError as error:
            raise LabError(str(error)) from None


def provide_database(stack: ExitStack) -> LabDatabase:
    """Start or reach the server, then (re)create the lab's database with its schema."""
    configured_url = os.environ.get("DATABASE_URL", "").strip()
    if configured_url:
        kind, server_pid = "external", None
        try:
            server_url = parse_database_url(configured_url)
        except ConfigurationError as error:
            raise LabError(str(error)) from None
    else:
        kind = "embedded"
        try:
            server = start_embedded_postgres()
        except Exception as error:  # noqa: BLE001 - any start failure is reported in one line
            raise LabError(f"could not start the embedded PostgreSQL: {error}") from None
        stack.callback(server.stop)
        # A server that dies mid-run stops the run with one line, rather than window after
        # window of failed requests.
        server.watch(lambda notice: interrupt_main_with(LabError(notice)))
        server_url, server_pid = parse_database_url(server.url), server.pid

    admin_url = libpq_url(server_url)
    where = describe_database_host(server_url)
    try:
        with psycopg.connect(admin_url, autocommit=True, connect_timeout=5) as connection:
            server_version = str(connection.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]  # SHOW always returns its one row
            name = sql.Identifier(LAB_DATABASE)
            connection.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
            connection.execute(sql.SQL("CREATE DATABASE {}").format(name))
    except psycopg.Error as error:
        reason = str(error).strip().splitlines()[0]
        raise LabError(f"cannot use the database server at {where}: {reason}") from None

    lab_url = server_url.set(database=LAB_DATABASE)
    stack.callback(drop_lab_database, admin_url)
    prepare_schema(libpq_url(lab_url))
    return LabDatabase(kind, libpq_url(lab_url), server_version, server_pid)


def prepare_schema(database_url: str) -> str:
    """Create the posts table (as the apps do, race-safe); returns the server's version."""
    try:
        url = parse_database_url(database_url)
    except ConfigurationError as error:
        raise LabError(str(error)) from None
    engine = create_database_engine(DatabaseSettings(url, pool_size=1, max_overflow=0))
    try:
        create_schema(engine)
        with engine.connect() as connection:
            return str(connection.exec_driver_sql("SHOW server_version").scalar())
    except DatabaseUnavailableError as error:
        raise LabError(str(error)) from None
    finally:
        engine.dispose()


def drop_lab_database(admin_url: str) -> None:
    try:
        with psycopg.connect(admin_url, autocommit=True, connect_timeout=5) as connection:
            connection.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    sql.Identifier(LAB_DATABASE)
                )
            )
    except psycopg.Error:
        pass  # the server is gone already (embedded, stopped first): nothing left to drop
