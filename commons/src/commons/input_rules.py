"""Plain-Python input rules that both schema layers apply in their own validators."""

import re
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal

# What the text fields refuse besides their length, said in OpenAPI by both schema layers.
TEXT_RULES = "At most {} characters; no NUL (\\u0000) characters and no lone surrogates."
# The NUL refusal as a JSON Schema pattern, so OpenAPI clients and fuzzers know it too. Only
# published: reject_unstorable_text enforces it (with a clearer message, at no regex cost). Lone
# surrogates need no pattern: they are no Unicode text, so no JSON Schema string holds them (and
# in ECMA-262 regexes, which JSON Schema uses, a surrogate range would also refuse emoji).
STORABLE_TEXT_PATTERN = "^[^\\u0000]*$"
# Bounds on stored text, in characters: published in OpenAPI by both schema layers, a 422 beyond.
TITLE_MAX_LENGTH = 300
CONTENT_MAX_LENGTH = 100_000


UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# A number as a date is Unix time in seconds, in every arm, over the whole datetime range.
EARLIEST_UNIX_SECONDS = -62_135_596_800  # 0001-01-01T00:00:00Z
LATEST_UNIX_SECONDS = 253_402_300_799  # 9999-12-31T23:59:59Z (and up to .999999 more)
# Numeric text that both majors read as a number (Pydantic 2 accepts no other spelling).
PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
UNIX_TIME_RULES = (
    "A date-time (ISO 8601, ASCII), or Unix time in seconds: from "
    f"{EARLIEST_UNIX_SECONDS} (0001-01-01T00:00:00Z) to {LATEST_UNIX_SECONDS} "
    "(9999-12-31T23:59:59Z), never milliseconds."
)


def read_unix_seconds(value: object) -> object:
    """Before Pydantic parses a date: a number, or plain numeric text, is Unix time in seconds.

    Both majors read a number above 2e10 as milliseconds (253402300799, 9999-12-31 in seconds,
    became 1978-01-11), and Pydantic 1 also reads any text float() takes ("1e3", " 12", "inf",
    Arabic-Indic digits) as Unix time, and "infinity" as 9999-12-31. Such text is refused here,
    as Pydantic 2 refuses it, and so is any non-ASCII text (Pydantic 1 read "٢٠٢٤-٠١-٠١..."
    as 2024-01-01). Anything else is left to Pydantic (booleans too: a pinned difference)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return moment_from_unix_seconds(Decimal(value))
    if isinstance(value, str):
        if not value.isascii():
            raise ValueError("must be written in ASCII (an ISO 8601 date-time, or Unix seconds)")
        if PLAIN_NUMBER.fullmatch(value):
            return moment_from_unix_seconds(Decimal(value))
        # No text float() takes has a ':', so a date-time with a time pays no float() attempt.
        if ":" not in value and is_float_text(value):
            raise ValueError("a number as a date is plain Unix seconds, like 1700000000 or -1.5")
    return value


def is_float_text(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def moment_from_unix_seconds(seconds: Decimal) -> datetime:
    """The UTC moment `seconds` after 1970-01-01, to the microsecond (half to even)."""
    microseconds = (
        int((seconds * 1_000_000).to_integral_value(ROUND_HALF_EVEN))
        if seconds.is_finite() and EARLIEST_UNIX_SECONDS <= seconds < LATEST_UNIX_SECONDS + 1
        else None
    )
    # The range is checked on the rounded value too: 253402300799.9999999 rounds past it.
    if microseconds is None or microseconds >= (LATEST_UNIX_SECONDS + 1) * 1_000_000:
        raise ValueError(
            f"is Unix time in seconds, from {EARLIEST_UNIX_SECONDS} (0001-01-01T00:00:00Z) "
            f"to {LATEST_UNIX_SECONDS} (9999-12-31T23:59:59Z)"
        )
    return UNIX_EPOCH + timedelta(microseconds=microseconds)


def to_utc(moment: datetime) -> datetime:
    """Naive means UTC. Raises ValueError (a 422 in both majors) rather than OverflowError."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("datetime is out of range once converted to UTC") from None


def reject_unstorable_text(text: str) -> str:
    """Refuse up front what PostgreSQL text cannot hold, rather than fail in the database:
    U+0000, and lone surrogates (valid JSON escapes such as "\\ud800", but not UTF-8)."""
    if "\x00" in text:
        raise ValueError("must not contain NUL (\\u0000) characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must not contain lone surrogates (\\ud800-\\udfff)") from None
    return text
