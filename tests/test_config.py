"""Settings and DATABASE_URL parsing."""

import pytest

from commons.application import open_database
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
        ("postgresql://u@h:99999/db", "port is not a TCP port"),
        ("postgresql://u:p@ss@h/db", "write an '@' inside a password"),
        ("postgresql://u/x:p@h/db", "write an '@' inside a password"),
        ("postgresql://", "names no database"),
        ("postgresql://u:p@h:5432/", "names no database"),
    ],
)
def test_parse_database_url_rejects_other_databases(raw_url: str, message_part: str) -> None:
    with pytest.raises(ConfigurationError, match=message_part):
        parse_database_url(raw_url)


@pytest.mark.parametrize(
    "raw_url",
    [
        "lab:S3CRETPW@127.0.0.1:1/lab",
        "postgresql://lab:S3CRETPW@127.0.0.1:abc/lab",
        "mysql://lab:S3CRETPW@h/db",
        "postgresql://lab:S3CRETPW@h:5432",
    ],
)
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
        ("BODY_TIMEOUT_SECONDS", "0", "must be a positive number of seconds"),
        ("MAX_BODY_BYTES_IN_FLIGHT", "1000", "must be at least 65536"),
        ("MAX_WAITING_ANSWER_BYTES", "-5", "must be at least 65536"),
        ("MIN_UPLOAD_BYTES_PER_SECOND", "0", "must be at least 1"),
        ("MIN_SEND_BYTES_PER_SECOND", "fast", "must be a whole number"),
        ("RATE_WINDOW_SECONDS", "inf", "must be a positive number of seconds"),
        ("MAX_CONNECTIONS", "many", "must be a whole number"),
        ("MAX_PAYLOAD_ROWS", "0", "must be at least 1"),
        ("MAX_BUILDING_ROWS", "0", "must be at least 1"),
        ("PAYLOAD_WAIT_SECONDS", "-1", "must be a positive number of seconds"),
        ("MAX_UNFINISHED_BODIES", "64", "is no longer read"),
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
    monkeypatch.setenv("BODY_TIMEOUT_SECONDS", "4.5")
    monkeypatch.setenv("MAX_BODY_BYTES_IN_FLIGHT", "100000")
    monkeypatch.setenv("MAX_WAITING_ANSWER_BYTES", "200000")
    monkeypatch.setenv("MIN_UPLOAD_BYTES_PER_SECOND", "100")
    monkeypatch.setenv("MIN_SEND_BYTES_PER_SECOND", "200")
    monkeypatch.setenv("RATE_WINDOW_SECONDS", "0.5")
    monkeypatch.setenv("MAX_CONNECTIONS", "100")
    monkeypatch.setenv("MAX_PAYLOAD_ROWS", "7")
    monkeypatch.setenv("PAYLOAD_WAIT_SECONDS", "1.5")
    monkeypatch.setenv("MAX_BUILDING_ROWS", "3")
    settings = load_settings()
    assert settings.database_timeout_s == 2.5
    assert (settings.http_limits.max_header_bytes, settings.http_limits.header_timeout_s) == (
        8192,
        3.0,
    )
    limits = settings.http_limits
    assert limits.body_timeout_s == 4.5
    assert (limits.max_body_bytes_in_flight, limits.max_waiting_answer_bytes) == (100000, 200000)
    assert (limits.min_upload_rate, limits.min_send_rate, limits.rate_window_s) == (100, 200, 0.5)
    assert limits.max_connections == 100
    assert (settings.max_payload_rows, settings.payload_wait_s) == (7, 1.5)
    assert settings.max_building_rows == 3


# (URL, its password as written, its password as meant). Passwords of letters unlike any word
# of a message, so that any of their 3-character pieces appearing in the output is a leak.
SECRET_URLS = [
    ("postgresql://lab:QzvAt@Wxk@127.0.0.1:1/lab", "QzvAt@Wxk", "QzvAt@Wxk"),  # issue 20's
    ("postgresql://lab:Qz@vW@xk@127.0.0.1:1/lab", "Qz@vW@xk", "Qz@vW@xk"),
    ("postgresql://lab:QzvW@127.0.0.1:1/lab@x", "QzvW", "QzvW"),  # '@' in the database name
    ("postgresql://lab/Qzv:Wxk@127.0.0.1:1/lab", "Qzv:Wxk", "Qzv:Wxk"),  # '/' in the user name
    ("postgresql://lab:Qzv:Wxk:Jyq@127.0.0.1:1/lab", "Qzv:Wxk:Jyq", "Qzv:Wxk:Jyq"),
    ("postgresql://lab:Qzv%40Wxk%3AJyq%2F@127.0.0.1:1/lab", "Qzv%40Wxk%3AJyq%2F", "Qzv@Wxk:Jyq/"),
    ("postgresql://lab:Qzv%ZZWxk@127.0.0.1:1/lab", "Qzv%ZZWxk", "Qzv%ZZWxk"),  # a bad escape
    ("postgresql://lab:Qzv/Wxk?Jyq#Vbn@127.0.0.1:1/lab", "Qzv/Wxk?Jyq#Vbn", "Qzv/Wxk?Jyq#Vbn"),
    ("postgresql://lab:QzvWxk@[::1:1/lab", "QzvWxk", "QzvWxk"),  # malformed authority
    ("postgresql://lab:QzvWxk@127.0.0.1:1:2/lab", "QzvWxk", "QzvWxk"),
    ("postgresql://lab:QzvWxk/lab", "QzvWxk", "QzvWxk"),  # no '@host': the password as a port
    ("postgresql://lab:987654/lab", "987654", "987654"),  # ... a number, but no TCP port
    ("lab:QzvWxk@127.0.0.1:1/lab", "QzvWxk", "QzvWxk"),  # no scheme
    ("lab:QzvWxk@host://lab", "QzvWxk", "QzvWxk"),  # no scheme before '://'
    ("mysql://lab:QzvWxk@127.0.0.1:1/lab", "QzvWxk", "QzvWxk"),
    ("postgresql://lab:QzvWxk@127.0.0.1:1", "QzvWxk", "QzvWxk"),  # no database
]


def pieces(secret: str) -> set[str]:
    """Every piece of 3 characters or more."""
    return {
        secret[start:end]
        for start in range(len(secret))
        for end in range(start + 3, len(secret) + 1)
    }


@pytest.mark.parametrize(("raw_url", "as_written", "as_meant"), SECRET_URLS)
def test_start_up_errors_show_no_piece_of_the_password(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    raw_url,
    as_written,
    as_meant,
) -> None:
    """The apps' start-up path (commons.application.open_database): one line, and no fragment of
    the password as written or as meant, whatever the URL's shape."""
    monkeypatch.setenv("DATABASE_URL", raw_url)
    with pytest.raises(SystemExit):
        open_database("Pydantic vX lab")
    output = capsys.readouterr()
    printed = output.out + output.err
    assert printed.count("\n") == 1 and printed.startswith("Pydantic vX lab: "), printed
    leaked = sorted(piece for piece in pieces(as_written) | pieces(as_meant) if piece in printed)
    assert not leaked, printed
