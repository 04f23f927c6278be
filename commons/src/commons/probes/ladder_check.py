"""Whether a ladder rung answers the same posts as `response_model`: the check the harness runs
before timing any rung (a rung that answers less would look faster for the wrong reason)."""

import json
from datetime import datetime
from typing import Any

POST_FIELDS = ("id", "published_at", "updated_at", "title", "content", "is_published")
TIMESTAMP_FIELDS = ("published_at", "updated_at")
# Where a difference is reported at all, this many are named.
MAX_REPORTED = 3


def parse_posts(body: bytes) -> list[dict[str, Any]]:
    """The posts of a {"posts": [...]} body, timestamps as aware datetimes (instants: Pydantic 2
    writes UTC as "Z", the others "+00:00"). ValueError says what is malformed."""
    try:
        document = json.loads(body)
    except ValueError as error:
        raise ValueError(f"the body is not JSON ({error})") from None
    if not isinstance(document, dict) or set(document) != {"posts"}:
        raise ValueError('the body is not {"posts": [...]}')
    posts = document["posts"]
    if not isinstance(posts, list):
        raise ValueError('"posts" is not a list')
    parsed = []
    for position, post in enumerate(posts):
        if not isinstance(post, dict) or set(post) != set(POST_FIELDS):
            raise ValueError(f"post {position} does not have exactly the fields {POST_FIELDS}")
        post = dict(post)
        for name in TIMESTAMP_FIELDS:
            post[name] = parse_instant(post[name], f"post {position} {name}")
        parsed.append(post)
    return parsed


def parse_instant(value: object, where: str) -> datetime:
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{where} {value!r} is not an ISO 8601 timestamp") from None
    if moment.tzinfo is None:
        raise ValueError(f"{where} {value!r} has no time zone, so it is no instant")
    return moment


def rung_differences(reference: bytes, body: bytes) -> list[str]:
    """What differs between a rung's body and the reference body (empty: the same posts)."""
    try:
        expected = parse_posts(reference)
    except ValueError as error:
        return [f"the reference is malformed: {error}"]
    try:
        posts = parse_posts(body)
    except ValueError as error:
        return [str(error)]
    if len(posts) != len(expected):
        return [f"{len(posts)} posts, expected {len(expected)}"]
    differences = []
    for position, (post, wanted) in enumerate(zip(posts, expected, strict=True)):
        for name in POST_FIELDS:
            # Exact types too: 1 == True in Python, but is_published must stay a boolean.
            if post[name] != wanted[name] or type(post[name]) is not type(wanted[name]):
                differences.append(
                    f"post {position} (id {wanted['id']}): {name} is {post[name]!r}, "
                    f"expected {wanted[name]!r}"
                )
    if len(differences) > MAX_REPORTED:
        more = len(differences) - MAX_REPORTED
        differences = differences[:MAX_REPORTED] + [f"... and {more} more differences"]
    return differences
