"""Settings and DATABASE_URL parsing."""

import pytest

from commons.config import (
    ConfigurationError,
    describe_database_host,
    load_settings,
    parse_database_url,
)


@pytest.mark.parametrize(
    "raw_url",
    [
        "postgresql://user:secret@db.example:5433/lab",
        "postgres://user:secret@db.example:5433/lab",
        "postgresql+psycopg://user:secret@db.example:5433/lab",
    ],
)
def test_parse_database_url_accepts_common_forms(raw_url: str) -> None:
    url = parse_database_url(raw_url)
    assert url.drivername == "postgresql+psycopg"
    assert (url.host, url.port, url.database, url.password) == ("db.example", 5433, "lab", "secret")


def test_parse_database_url_keeps_socket_host_parameter() -> None:
    url = parse_database_url("postgresql://postgres:@/postgres?host=/tmp/socket-dir")
    assert url.query["host"] == "/tmp/socket-dir"
    assert describe_database_host(url) == "socket /tmp/socket-dir/postgres"


@pytest.mark.parametrize(
    ("raw_url", "message_part"),
    [
        ("mysql://root@localhost/db", "must be a PostgreSQL URL"),
        ("postgresql+asyncpg://u@h/db", "not supported"),
        ("not a url", "not a valid URL"),
        ("postgresql://u@127.0.0.1:abc/x", r"not a valid URL \(check the host and port\)"),
        ("postgresql://u@[::1:5432/x", r"not a valid URL \(check the host and port\)"),
        ("postgresql://u@h:99999/db", "port 99999 is not a TCP port"),
        ("postgresql://", "names no database"),
        ("postgresql://u:p@h:5432/", "names no database"),
    ],
)
def test_parse_database_url_rejects_other_databases(raw_url: str, message_part: str) -> None:
    with pytest.raises(ConfigurationError, match=message_part):
        parse_database_url(raw_url)


@pytest.mark.parametrize(
    "raw_url",
    ["lab:S3CRETPW@127.0.0.1:1/lab", "postgresql://lab:S3CRETPW@127.0.0.1:abc/lab",
     "mysql://lab:S3CRETPW@h/db", "postgresql://lab:S3CRETPW@h:5432"],
)  # fmt: skip
def test_errors_never_show_the_password(raw_url: str) -> None:
    with pytest.raises(ConfigurationError) as error:
        parse_database_url(raw_url)
    assert "S3CRETPW" not in str(error.value) and "\n" not in str(error.value)


def test_load_settings_requires_database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="DATABASE_URL is not set"):
        load_settings()


def test_load_settings_rejects_non_numeric_pool_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://u@h/db")
    monkeypatch.setenv("DB_POOL_SIZE", "many")
    with pytest.raises(ConfigurationError, match="DB_POOL_SIZE must be a whole number"):
        load_settings()


def test_describe_database_host_never_shows_the_password() -> None:
    description = describe_database_host(parse_database_url("postgresql://u:hunter2@h:6000/db"))
    assert description == "h:6000/db"


@pytest.mark.parametrize(
    ("name", "raw_value", "message_part"),
    [
        ("DATABASE_TIMEOUT_SECONDS", "soon", "must be a number of seconds"),
        ("DATABASE_TIMEOUT_SECONDS", "0", "must be a positive number of seconds"),
        ("DATABASE_TIMEOUT_SECONDS", "nan", "must be a positive number of seconds"),
        ("HEADER_TIMEOUT_SECONDS", "-1", "must be a positive number of seconds"),
        ("MAX_HEADER_BYTES", "100", "must be at least 1024"),
    ],
)
def test_load_settings_rejects_bad_limits(
    monkeypatch: pytest.MonkeyPatch, name: str, raw_value: str, message_part: str
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://u@h/db")
    monkeypatch.setenv(name, raw_value)
    with pytest.raises(ConfigurationError, match=f"{name} {message_part}"):
        load_settings()


def test_load_settings_reads_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://u@h/db")
    monkeypatch.setenv("DATABASE_TIMEOUT_SECONDS", "2.5")
    monkeypatch.setenv("MAX_HEADER_BYTES", "8192")
    monkeypatch.setenv("HEADER_TIMEOUT_SECONDS", "3")
    settings = load_settings()
    assert settings.database_timeout_s == 2.5
    assert (settings.http_limits.max_header_bytes, settings.http_limits.header_timeout_s) == (
        8192, 3.0)  # fmt: skip
