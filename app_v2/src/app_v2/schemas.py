"""Pydantic 2 schemas: `@computed_field` for is_published, `from_attributes`."""

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator

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
    # The pattern is only published in OpenAPI; reject_unstorable_text enforces it.
    title: str = Field(
        max_length=TITLE_MAX_LENGTH,
        description=TEXT_RULES.format(TITLE_MAX_LENGTH),
        json_schema_extra={"pattern": STORABLE_TEXT_PATTERN},
    )
    content: str = Field(
        max_length=CONTENT_MAX_LENGTH,
        description=TEXT_RULES.format(CONTENT_MAX_LENGTH),
        json_schema_extra={"pattern": STORABLE_TEXT_PATTERN},
    )
    published_at: datetime = Field(description=UNIX_TIME_RULES)

    _unix_seconds = field_validator("published_at", mode="before")(read_unix_seconds)
    _published_at_in_utc = field_validator("published_at")(to_utc)
    _storable_text = field_validator("title", "content")(reject_unstorable_text)


class PostOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    published_at: datetime
    updated_at: datetime
    title: str
    content: str

    @computed_field  # type: ignore[prop-decorator]
    @property
    def is_published(self) -> bool:
        return to_utc(self.published_at) <= datetime.now(UTC)


class PostsOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    posts: list[PostOut]
