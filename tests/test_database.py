"""Schema creation against a real PostgreSQL: idempotent and safe under concurrent starts."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import inspect

from commons.config import Settings, parse_database_url
from commons.database import (
    DatabaseUnavailableError,
    create_database_engine,
    create_schema,
    database_serves_posts,
)
from tests.database_helpers import drop_database, recreate_database


def test_create_schema_is_safe_when_many_processes_start_at_once(server_url: str) -> None:
    database_url = recreate_database(server_url, "pydantic_lab_test_schema_race")
    engines = [
        create_database_engine(Settings(parse_database_url(database_url), 1, 0)) for _ in range(6)
    ]
    try:
        with ThreadPoolExecutor(max_workers=len(engines)) as pool:
            list(pool.map(create_schema, engines))  # re-raises any failure
        assert "posts" in inspect(engines[0]).get_table_names()
        create_schema(engines[0])  # and again, on an existing schema
    finally:
        for engine in engines:
            engine.dispose()
        drop_database(server_url, "pydantic_lab_test_schema_race")


def test_unreachable_database_gives_one_line_error_naming_the_host() -> None:
    engine = create_database_engine(
        Settings(parse_database_url("postgresql://u:p@127.0.0.1:1/nowhere"), 1, 0)
    )
    assert database_serves_posts(engine) is False
    with pytest.raises(DatabaseUnavailableError) as error:
        create_schema(engine)
    message = str(error.value)
    assert "127.0.0.1:1/nowhere" in message
    assert "\n" not in message and "p@" not in message
