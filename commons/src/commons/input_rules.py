"""Plain-Python input rules that both schema layers apply in their own validators."""

from datetime import UTC, datetime


def to_utc(moment: datetime) -> datetime:
    """Naive means UTC. Raises ValueError (a 422 in both majors) rather than OverflowError."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("datetime is out of range once converted to UTC") from None


def reject_nul(text: str) -> str:
    # PostgreSQL text cannot hold U+0000; refuse it up front rather than fail in the database.
    if "\x00" in text:
        raise ValueError("must not contain NUL (\\u0000) characters")
    return text
