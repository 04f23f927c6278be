"""Pydantic 1.10 schemas: `@validator(..., always=True)` for is_published, `orm_mode`.

Every Pydantic import goes through `pydantic.v1`: on Pydantic 1.10.17+ that is Pydantic itself
(the same compiled module, the v1 arm), on Pydantic 2 the 1.10 source as pure Python that
Pydantic 2 ships (the v1-shim arm: app_v1_shim/), so one codebase runs both."""

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic.v1 import BaseModel, Field, StrictStr, validator

from commons.input_rules import (
    CONTENT_MAX_LENGTH,
    STORABLE_TEXT_PATTERN,
    TEXT_RULES,
    TITLE_MAX_LENGTH,
    UNIX_TIME_RULES,
    read_unix_seconds,
    reject_unstorable_text,
    to_utc,
)


class Order(StrEnum):
    asc = "asc"
    desc = "desc"


class PostIn(BaseModel):
    # StrictStr: Pydantic 1 would store a JSON number, true or NaN as the text "123", "True",
    # "nan" (Pydantic 2's str refuses them). The pattern is only published in OpenAPI;
    # reject_unstorable_text enforces it.
    title: StrictStr = Field(
        max_length=TITLE_MAX_LENGTH,
        description=TEXT_RULES.format(TITLE_MAX_LENGTH),
        pattern=STORABLE_TEXT_PATTERN,
    )
    content: StrictStr = Field(
        max_length=CONTENT_MAX_LENGTH,
        description=TEXT_RULES.format(CONTENT_MAX_LENGTH),
        pattern=STORABLE_TEXT_PATTERN,
    )
    published_at: datetime = Field(description=UNIX_TIME_RULES)

    _unix_seconds = validator("published_at", pre=True, allow_reuse=True)(read_unix_seconds)
    _published_at_in_utc = validator("published_at", allow_reuse=True)(to_utc)
    _storable_text = validator("title", "content", allow_reuse=True)(reject_unstorable_text)


class PostOut(BaseModel):
    id: int
    published_at: datetime
    updated_at: datetime
    title: str
    content: str
    is_published: bool = False

    @validator("is_published", always=True)
    def compute_is_published(cls, _value: Any, values: dict[str, Any]) -> bool:
        published_at = values.get("published_at")
        if published_at is None:  # published_at itself failed validation
            return False
        return to_utc(published_at) <= datetime.now(UTC)

    class Config:
        orm_mode = True


class PostsOut(BaseModel):
    posts: list[PostOut]

    class Config:
        orm_mode = True
