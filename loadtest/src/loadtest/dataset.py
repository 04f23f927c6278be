"""The deterministic dataset: every app run starts from exactly the same rows."""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import psycopg

FIRST_PUBLISHED_AT = datetime(2020, 1, 1, tzinfo=UTC)
CREATED_AT = datetime(2019, 12, 1, tzinfo=UTC)
SCHEDULED_EVERY = 10  # every tenth post is scheduled far in the future (is_published false)
SCHEDULED_OFFSET = timedelta(days=100 * 365)
BODY = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. "


def dataset_rows(size: int) -> Iterator[tuple[datetime, datetime, datetime, str, str]]:
    for number in range(1, size + 1):
        published_at = FIRST_PUBLISHED_AT + timedelta(hours=number)
        if number % SCHEDULED_EVERY == 0:
            published_at += SCHEDULED_OFFSET
        yield (
            CREATED_AT,
            CREATED_AT,
            published_at,
            f"Post number {number}",
            f"Post {number}. " + BODY * (1 + number % 4),
        )


def load_dataset(database_url: str, size: int) -> None:
    """Empty the posts table and fill it with `size` deterministic posts (ids 1..size)."""
    with psycopg.connect(database_url) as connection:
        connection.execute("TRUNCATE posts RESTART IDENTITY")
        with connection.cursor().copy(
            "COPY posts (created_at, updated_at, published_at, title, content) FROM STDIN"
        ) as copy:
            for row in dataset_rows(size):
                copy.write_row(row)
        connection.commit()
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE posts")


def count_visible_posts(database_url: str) -> int:
    with psycopg.connect(database_url) as connection:
        row = connection.execute("SELECT count(*) FROM posts WHERE NOT is_deleted").fetchone()
    return int(row[0]) if row else 0
