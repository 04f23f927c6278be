"""Plain-Python input rules that both schema layers apply in their own validators."""

from datetime import UTC, datetime

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


def received_moment(moment: datetime) -> datetime:
    """An input timestamp in UTC (to_utc), refusing the two extreme datetimes: Pydantic 1 turns
    "infinity", JSON Infinity and numbers too large for a timestamp (1e400) into them, and
    they are no real moment. For input only: responses call to_utc per post, and must not pay
    for this check (100 posts a request)."""
    if moment.replace(tzinfo=None) in (datetime.max, datetime.min):
        raise ValueError("is not a real moment (infinity, or a number too large for a date)")
    return to_utc(moment)


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
