"""The synthetic posts take the path ORM rows take through FastAPI, not a dataclass detour."""

import dataclasses

from fastapi.routing import _prepare_response_content

from commons.models import Post
from commons.synthetic import build_synthetic_posts


def test_synthetic_posts_are_plain_attribute_objects() -> None:
    post = build_synthetic_posts(1)[0]
    assert not dataclasses.is_dataclass(post)
    assert not isinstance(post, dict)
    columns = {column.key for column in Post.__table__.columns}
    assert {name for name in columns if hasattr(post, name)} == columns


def test_fastapi_does_not_copy_synthetic_posts_before_validating() -> None:
    # FastAPI turns a returned dataclass into a dict (dataclasses.asdict, a deep copy) before
    # validation; an ORM row or a plain object is passed through as it is. The synthetic
    # scenario must measure the second path, the one /posts takes.
    posts = build_synthetic_posts(3)
    prepared = _prepare_response_content({"posts": posts}, exclude_unset=False)
    assert all(after is before for after, before in zip(prepared["posts"], posts, strict=True))
