"""Schemathesis hooks for tests/api/test_schemathesis.py: accept exactly the inputs whose
handling is a pinned, documented difference between the Pydantic majors.

Each arm must still reject what its schema forbids, except these classes of input, which one
major or both accept by design (Pydantic's coercions). tests/api/test_differences.py pins each
one per arm, and docs/api.md's "behaviour differences" table lists them:
- a number, plain numeric text or a boolean for `published_at` (read as Unix time in seconds;
  booleans by Pydantic 1 only), and a date without a time (Pydantic 2 only);
- a date-time that leaves the representable range once converted to UTC, refused by every arm
  (a schema-valid input rejected by design, which JSON Schema cannot express);
- either of those in any post of a bulk body (POST /posts_bulk, POST /payloads/validate);
- an integer in a path or query written the way Python's int() also reads it: with underscores
  or surrounding spaces (both majors), or as an integer-valued float such as "10.0" (Pydantic 2).
  Only in ASCII: every arm refuses other digits and spaces (commons.routes.AsciiIntegersRoute).
"""

import re
from datetime import datetime
from typing import Any

import schemathesis
from schemathesis.core.failures import AcceptedNegativeData
from schemathesis.openapi.checks import RejectedPositiveData

from commons.input_rules import CONTENT_MAX_LENGTH, PLAIN_NUMBER, TITLE_MAX_LENGTH, to_utc
from commons.payloads import MAX_BULK_POSTS, MAX_COMMENTS_PER_POST, MAX_PAYLOAD_ITEMS
from commons.routes import MAX_PAGE, MAX_PER_PAGE

DATE_WITHOUT_TIME = re.compile(r"\d{4}-\d{2}-\d{2}")
INTEGER_PARAMETERS = ("post_id", "per_page", "page", "items", "comments")
# The bounds a lenient spelling must still respect (post_id has none: out of range is a 404).
INTEGER_BOUNDS = {
    "per_page": (1, MAX_PER_PAGE),
    "page": (0, MAX_PAGE),
    "items": (1, MAX_PAYLOAD_ITEMS),
    "comments": (0, MAX_COMMENTS_PER_POST),
}
TEXT_LIMITS = {"title": TITLE_MAX_LENGTH, "content": CONTENT_MAX_LENGTH}
POST_FIELDS = ("title", "content", "published_at")


def is_coerced_scalar(value: Any) -> bool:
    return isinstance(value, bool | int | float)


def is_lenient_integer(value: Any) -> bool:
    """An ASCII string that is no plain integer but that Pydantic reads as one."""
    if not isinstance(value, str) or not value.isascii() or re.fullmatch(r"-?[0-9]+", value):
        return False
    try:
        int(value)  # underscores, surrounding spaces
        return True
    except ValueError:
        pass
    try:
        number = float(value)  # "10.0", "1e1" (Pydantic 2)
    except ValueError:
        return False
    return number.is_integer()


def is_pinned_date(value: Any) -> bool:
    return is_coerced_scalar(value) or (
        isinstance(value, str)
        and (DATE_WITHOUT_TIME.fullmatch(value) or PLAIN_NUMBER.fullmatch(value)) is not None
    )


def is_storable_text(value: Any, max_length: int) -> bool:
    return isinstance(value, str) and len(value) <= max_length and "\x00" not in value


def posts_of(body: Any) -> list[Any]:
    """The posts a body holds: itself (POST/PUT /posts), or each of a bulk body's."""
    if not isinstance(body, dict):
        return []
    if isinstance(body.get("posts"), list):  # POST /posts_bulk, POST /payloads/validate
        return list(body["posts"])
    return [body]


def as_integer(value: Any) -> int | None:
    """What Pydantic reads from an ASCII integer, plain or lenient; None for anything else."""
    text = str(value)
    if not text.isascii():
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


def integer_fine(name: str, value: Any) -> bool:
    number = as_integer(value)
    if number is None:
        return False
    low, high = INTEGER_BOUNDS.get(name, (None, None))
    return (low is None or number >= low) and (high is None or number <= high)


def post_fine(post: Any) -> bool:
    """Every field there, the texts storable: nothing but the date can be the difference."""
    return (
        isinstance(post, dict)
        and all(field in post for field in POST_FIELDS)
        and all(is_storable_text(post[field], limit) for field, limit in TEXT_LIMITS.items())
    )


def has_pinned_input(case: Any) -> bool:
    """A pinned input is present, and nothing else in the request breaks the schema that an
    arm could have let through: so a failure for this case is the pinned difference itself."""
    posts = posts_of(case.body)
    parameters = {**(case.path_parameters or {}), **(case.query or {})}
    integers = {name: parameters[name] for name in INTEGER_PARAMETERS if name in parameters}
    pinned = any(
        isinstance(post, dict) and is_pinned_date(post.get("published_at")) for post in posts
    ) or any(is_lenient_integer(value) for value in integers.values())
    if not pinned:
        return False
    bulk = isinstance(case.body, dict) and "posts" in case.body
    count_fine = not bulk or 1 <= len(posts) <= MAX_BULK_POSTS
    posts_fine = all(post_fine(post) for post in posts)
    integers_fine = all(integer_fine(name, value) for name, value in integers.items())
    return count_fine and posts_fine and integers_fine


def is_unrepresentable_instant(value: Any) -> bool:
    """A date-time JSON Schema allows that leaves Python's datetime range once converted to UTC
    (0001-01-01T00:00:00+00:01): every arm refuses it with a 422 by design (to_utc, docs/api.md),
    and no JSON Schema keyword can say so."""
    if not isinstance(value, str):
        return False
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return False
    try:
        to_utc(moment)
    except ValueError:
        return True
    return False


def has_unrepresentable_instant(case: Any) -> bool:
    return any(
        isinstance(post, dict) and is_unrepresentable_instant(post.get("published_at"))
        for post in posts_of(case.body)
    )


@schemathesis.hook
def filter_failure(context: Any, failure: Any, case: Any, response: Any) -> bool:
    """Keep every failure but an accepted input of a pinned class, and a schema-valid date-time
    refused because it cannot be an instant in UTC."""
    if isinstance(failure, AcceptedNegativeData) and has_pinned_input(case):
        return False
    return not (isinstance(failure, RejectedPositiveData) and has_unrepresentable_instant(case))
