"""Schemathesis hooks for tests/api/test_schemathesis.py: accept exactly the inputs whose
handling is a pinned, documented difference between the Pydantic majors.

Each arm must still reject what its schema forbids, except these classes of input, which one
major or both accept by design (Pydantic's coercions). tests/api/test_differences.py pins each
one per arm, and docs/api.md's "behaviour differences" table lists them:
- a number, plain numeric text or a boolean for `published_at` (read as Unix time in seconds;
  booleans by Pydantic 1 only), and a date without a time (Pydantic 2 only);
- either of those in any post of a bulk body (POST /posts_bulk, POST /payloads/validate);
- an integer in a path or query written the way Python's int() also reads it: with underscores
  or surrounding spaces (both majors), or as an integer-valued float such as "10.0" (Pydantic 2).
  Only in ASCII: every arm refuses other digits and spaces (commons.routes.AsciiIntegersRoute).
"""

import re
from typing import Any

import schemathesis
from schemathesis.core.failures import AcceptedNegativeData

from commons.input_rules import CONTENT_MAX_LENGTH, PLAIN_NUMBER, TITLE_MAX_LENGTH

DATE_WITHOUT_TIME = re.compile(r"\d{4}-\d{2}-\d{2}")
INTEGER_PARAMETERS = ("post_id", "per_page", "page", "items", "comments")
TEXT_LIMITS = {"title": TITLE_MAX_LENGTH, "content": CONTENT_MAX_LENGTH}


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


def posts_of(body: Any) -> list[dict[str, Any]]:
    """The posts a body holds: itself (POST/PUT /posts), or each of a bulk body's."""
    if not isinstance(body, dict):
        return []
    if isinstance(body.get("posts"), list):  # POST /posts_bulk, POST /payloads/validate
        return [post if isinstance(post, dict) else {} for post in body["posts"]]
    return [body]


def has_pinned_input(case: Any) -> bool:
    """A pinned input is present, and nothing else in the request breaks the schema that an
    arm could have let through: so a failure for this case is the pinned difference itself."""
    posts = posts_of(case.body)
    parameters = {**(case.path_parameters or {}), **(case.query or {})}
    integers = [parameters[name] for name in INTEGER_PARAMETERS if name in parameters]
    pinned = any(is_pinned_date(post.get("published_at")) for post in posts) or any(
        is_lenient_integer(value) for value in integers
    )
    if not pinned:
        return False
    texts_fine = all(
        field not in post or is_storable_text(post[field], limit)
        for post in posts
        for field, limit in TEXT_LIMITS.items()
    )
    integers_fine = all(
        is_lenient_integer(value) or (isinstance(value, str | int) and str(value).isascii())
        for value in integers
    )
    return texts_fine and integers_fine


@schemathesis.hook
def filter_failure(context: Any, failure: Any, case: Any, response: Any) -> bool:
    """Keep every failure but an accepted input of a pinned class."""
    return not (isinstance(failure, AcceptedNegativeData) and has_pinned_input(case))
