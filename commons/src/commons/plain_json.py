"""The hand-written path: a post as a dict by a plain function, then a JSON encoder. No schema
layer at all, so nothing is validated: what the ladder's `plain_*` rungs and the
micro-benchmarks compare Pydantic with (the DRF study's "plain function")."""

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import orjson

from commons.input_rules import to_utc


def post_dict(post: Any, now: datetime) -> dict[str, Any]:
    """The fields of PostOut, read by attribute; is_published as both schema layers compute it."""
    return {
        "id": post.id,
        "published_at": post.published_at,
        "updated_at": post.updated_at,
        "title": post.title,
        "content": post.content,
        "is_published": to_utc(post.published_at) <= now,
    }


def posts_payload(posts: Iterable[Any]) -> dict[str, list[dict[str, Any]]]:
    now = datetime.now(UTC)
    return {"posts": [post_dict(post, now) for post in posts]}


def isoformat_default(value: object) -> str:
    """A Python `default` for encoders: datetimes as ISO 8601 (what the study's custom
    encoders do); anything else is an error, as without a default."""
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def stdlib_json(payload: object) -> bytes:
    """Compact like FastAPI's JSONResponse; json has no datetime of its own, so the default."""
    return json.dumps(
        payload, default=isoformat_default, ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8")


def native_orjson(payload: object) -> bytes:
    """orjson renders datetimes itself, in Rust (ISO 8601, +00:00 for UTC)."""
    return orjson.dumps(payload)


def orjson_with_default(payload: object) -> bytes:
    """orjson handing every datetime to the Python default, as the study's slower variant."""
    return orjson.dumps(payload, default=isoformat_default, option=orjson.OPT_PASSTHROUGH_DATETIME)
