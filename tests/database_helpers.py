"""Test-only helpers: throwaway databases on a real PostgreSQL server."""

import psycopg
from psycopg import sql
from sqlalchemy.engine import URL, make_url

from commons.config import libpq_url, parse_database_url


def url_for_database(server_url: str, database: str) -> URL:
    return parse_database_url(server_url).set(database=database)


def recreate_database(server_url: str, database: str) -> str:
    """Drop and create `database`; returns its libpq URL. Never touches any other database."""
    admin_url = libpq_url(make_url(server_url).set(drivername="postgresql"))
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
        )
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    return libpq_url(url_for_database(server_url, database))


def drop_database(server_url: str, database: str) -> None:
    admin_url = libpq_url(make_url(server_url).set(drivername="postgresql"))
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
        )


def truncate_posts(database_url: str) -> None:
    """Empty the posts table, and with it their comments and tags."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("TRUNCATE posts, comments, post_tags, tags RESTART IDENTITY")
