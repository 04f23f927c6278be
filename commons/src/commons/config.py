"""Settings read from the environment (plain Python, so both Pydantic majors share them)."""

import math
import os
import re
from dataclasses import dataclass

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

EXAMPLE_DATABASE_URL = "postgresql://postgres:postgres@127.0.0.1:5432/postgres"
URL_SHAPE = "postgresql://user:password@host:port/database"
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")  # RFC 3986's scheme characters
# SQLAlchemy's reading of a URL's user name and password: the name runs to ':' (or '@'), the
# password to the first '@'. An '@' elsewhere (in the password itself, say) would end the
# password early and turn its rest into the host, which error messages print.
USERINFO = re.compile(r"[^:/@]*(?::[^@]*)?@")


class ConfigurationError(Exception):
    """A setting is missing or malformed; the message is one line meant for a person."""


# What the kernel may hold of one connection, each way (SO_SNDBUF, SO_RCVBUF; Linux allocates
# twice the figure). Left to itself it grew a send buffer to 4 MiB and a receive buffer to
# 32 MiB. An answer of the benchmark's (READ: 100 posts) still leaves in one write.
SEND_BUFFER_BYTES = 64 * 1024
RECEIVE_BUFFER_BYTES = 64 * 1024


@dataclass(frozen=True)
class HttpLimits:
    """What a client can make the server hold, enforced by commons/hardening/http_protocol.py."""

    max_header_bytes: int = 64 * 1024  # a longer head gets 431 (MAX_HEADER_BYTES)
    header_timeout_s: float = 10.0  # a head not complete by then gets 408 (HEADER_TIMEOUT_SECONDS)
    body_timeout_s: float = 30.0  # a body not complete by then gets 408 (BODY_TIMEOUT_SECONDS)
    # A body unfinished at the end of a window of RATE_WINDOW_SECONDS that brought fewer than
    # this many bytes a second gets 408 (MIN_UPLOAD_BYTES_PER_SECOND).
    min_upload_rate: int = 16 * 1024
    # An answer the client took fewer bytes a second of, over a whole window while it waited,
    # is abandoned and its connection closed (MIN_SEND_BYTES_PER_SECOND).
    min_send_rate: int = 8 * 1024
    rate_window_s: float = 5.0  # RATE_WINDOW_SECONDS
    # Bytes of bodies received over several reads, from their first read until they are
    # answered, all connections together; a body whose next read would pass it gets 503
    # (MAX_BODY_BYTES_IN_FLIGHT).
    max_body_bytes_in_flight: int = 32 * 1024 * 1024
    # Bytes of answers waiting on clients that do not read them, all connections together; past
    # it, the longest-waiting answer is abandoned (MAX_WAITING_ANSWER_BYTES).
    max_waiting_answer_bytes: int = 32 * 1024 * 1024
    # Open connections; one more closes the oldest idle one, or, with none idle, is answered
    # 503 (MAX_CONNECTIONS).
    max_connections: int = 250


@dataclass(frozen=True)
class Settings:
    database_url: URL
    pool_size: int
    max_overflow: int
    max_body_bytes: int = 1024 * 1024  # larger request bodies get 413 (MAX_BODY_BYTES)
    # A request that needs the database gets a 503 after this long (DATABASE_TIMEOUT_SECONDS).
    database_timeout_s: float = 5.0
    http_limits: HttpLimits = HttpLimits()
    # Rows (posts and comments) the payload routes build and send at once; past it a request
    # waits, then gets 503 (MAX_PAYLOAD_ROWS, PAYLOAD_WAIT_SECONDS;
    # commons/hardening/payload_rows.py). Twice the largest answer (5,000 posts x 11 rows).
    max_payload_rows: int = 110_000
    payload_wait_s: float = 5.0
    # Of those, the rows being built at once, from admission until the answer starts: what
    # bounds the event loop's serialisation work (MAX_BUILDING_ROWS; the same module).
    max_building_rows: int = 5_000


def parse_database_url(raw_url: str) -> URL:
    """Accept `postgresql://`, `postgres://` and `postgresql+psycopg://` URLs; use psycopg 3.

    Errors are one line and never repeat any part of the URL that could hold a secret: only a
    well-formed scheme is named, and a URL whose user name and password cannot be told apart
    from the rest with certainty is refused before any message could show a piece of them."""
    scheme, separator, rest = raw_url.strip().partition("://")
    if not separator or not SCHEME.fullmatch(scheme):
        raise ConfigurationError(f"DATABASE_URL is not a valid URL: expected {URL_SHAPE}")
    backend, _, driver = scheme.partition("+")
    if backend not in ("postgresql", "postgres"):
        raise ConfigurationError(
            f"DATABASE_URL must be a PostgreSQL URL (postgresql://...), got {scheme}://"
        )
    if driver not in ("", "psycopg"):
        raise ConfigurationError(
            f"DATABASE_URL driver {driver!r} is not supported; "
            "use postgresql:// or postgresql+psycopg://"
        )
    if "@" in rest and (rest.count("@") > 1 or not USERINFO.match(rest)):
        raise ConfigurationError(
            "DATABASE_URL has an '@' that does not end the user name and password; "
            "write an '@' inside a password, user name or parameter as %40"
        )
    try:
        url = make_url(f"postgresql+psycopg://{rest}")
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise ConfigurationError(
            f"DATABASE_URL is not a valid URL (check the host and port): expected {URL_SHAPE}"
        ) from None
    if url.port is not None and not 1 <= url.port <= 65535:
        # The number is not repeated: in a URL missing its '@host', it is the password.
        raise ConfigurationError("DATABASE_URL's port is not a TCP port (1-65535)")
    if not url.database:
        # libpq would fall back to a database named after the user, on whatever server its
        # defaults reach: never what was meant.
        raise ConfigurationError(
            f"DATABASE_URL names no database; give one at the end: {URL_SHAPE}"
        )
    return url


def libpq_url(url: URL) -> str:
    """The same URL without SQLAlchemy's `+psycopg` marker, for psycopg, libpq and the apps."""
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def describe_database_host(url: URL) -> str:
    """Where the database lives, for error messages (never includes the password)."""
    socket_dir = url.query.get("host")
    if url.host:
        location = f"{url.host}:{url.port or 5432}"
    elif socket_dir:
        location = f"socket {socket_dir if isinstance(socket_dir, str) else socket_dir[0]}"
    else:
        location = "the default local socket"
    return f"{location}/{url.database or ''}"


def _read_positive_int(name: str, default: int, minimum: int = 0) -> int:
    raw_value = os.environ.get(name, "").strip()
    if not raw_value:
        return default
    try:
        value = int(raw_value)
    except ValueError:
        raise ConfigurationError(f"{name} must be a whole number, got {raw_value!r}") from None
    if value < minimum:
        if minimum == 0:
            raise ConfigurationError(f"{name} must not be negative, got {value}")
        raise ConfigurationError(f"{name} must be at least {minimum}, got {value}")
    return value


def _read_positive_seconds(name: str, default: float) -> float:
    raw_value = os.environ.get(name, "").strip()
    if not raw_value:
        return default
    try:
        value = float(raw_value)
    except ValueError:
        raise ConfigurationError(f"{name} must be a number of seconds, got {raw_value!r}") from None
    if not 0 < value < math.inf:
        raise ConfigurationError(f"{name} must be a positive number of seconds, got {raw_value!r}")
    return value


def load_http_limits() -> HttpLimits:
    if os.environ.get("MAX_UNFINISHED_BODIES", "").strip():
        # A count of bodies let 64 connections that sent 11 bytes each refuse every other
        # upload; what a body holds is its bytes, so the bound is on bytes now.
        raise ConfigurationError(
            "MAX_UNFINISHED_BODIES is no longer read; bodies in flight are bounded in bytes by "
            "MAX_BODY_BYTES_IN_FLIGHT (docs/operations.md)"
        )
    defaults = HttpLimits()
    return HttpLimits(
        max_header_bytes=_read_positive_int(
            "MAX_HEADER_BYTES", defaults.max_header_bytes, minimum=1024
        ),
        header_timeout_s=_read_positive_seconds(
            "HEADER_TIMEOUT_SECONDS", defaults.header_timeout_s
        ),
        body_timeout_s=_read_positive_seconds("BODY_TIMEOUT_SECONDS", defaults.body_timeout_s),
        min_upload_rate=_read_positive_int(
            "MIN_UPLOAD_BYTES_PER_SECOND", defaults.min_upload_rate, minimum=1
        ),
        min_send_rate=_read_positive_int(
            "MIN_SEND_BYTES_PER_SECOND", defaults.min_send_rate, minimum=1
        ),
        rate_window_s=_read_positive_seconds("RATE_WINDOW_SECONDS", defaults.rate_window_s),
        max_body_bytes_in_flight=_read_positive_int(
            "MAX_BODY_BYTES_IN_FLIGHT", defaults.max_body_bytes_in_flight, minimum=64 * 1024
        ),
        max_waiting_answer_bytes=_read_positive_int(
            "MAX_WAITING_ANSWER_BYTES", defaults.max_waiting_answer_bytes, minimum=64 * 1024
        ),
        max_connections=_read_positive_int("MAX_CONNECTIONS", defaults.max_connections, minimum=1),
    )


def load_settings() -> Settings:
    raw_url = os.environ.get("DATABASE_URL", "").strip()
    if not raw_url:
        raise ConfigurationError(
            f"DATABASE_URL is not set; export it first, e.g. DATABASE_URL={EXAMPLE_DATABASE_URL}"
        )
    return Settings(
        database_url=parse_database_url(raw_url),
        pool_size=_read_positive_int("DB_POOL_SIZE", 10),
        max_overflow=_read_positive_int("DB_MAX_OVERFLOW", 10),
        # Each default once, where Settings declares it.
        max_body_bytes=_read_positive_int("MAX_BODY_BYTES", Settings.max_body_bytes),
        database_timeout_s=_read_positive_seconds(
            "DATABASE_TIMEOUT_SECONDS", Settings.database_timeout_s
        ),
        http_limits=load_http_limits(),
        max_payload_rows=_read_positive_int(
            "MAX_PAYLOAD_ROWS", Settings.max_payload_rows, minimum=1
        ),
        payload_wait_s=_read_positive_seconds("PAYLOAD_WAIT_SECONDS", Settings.payload_wait_s),
        max_building_rows=_read_positive_int(
            "MAX_BUILDING_ROWS", Settings.max_building_rows, minimum=1
        ),
    )
