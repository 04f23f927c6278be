"""The deterministic dataset: every app run starts from exactly the same rows, posts and their
comments and tags (commons/related_rows.py)."""

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta

import psycopg

from commons.related_rows import RELATED_PREFIX, load_related_rows

FIRST_PUBLISHED_AT = datetime(2020, 1, 1, tzinfo=UTC)  # then one post an hour, into 2021
WRITTEN_BEFORE = timedelta(days=2)  # each post is created two days before it is published ...
EDITED_BEFORE = timedelta(days=1)  # ... and last edited the day before
SCHEDULED_EVERY = 10  # every tenth post is scheduled years ahead (is_published false) ...
SCHEDULED_OFFSET = timedelta(days=10 * 365)  # ... in 2030-2031
BODY = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. "


def dataset_rows(size: int) -> Iterator[tuple[datetime, datetime, datetime, str, str]]:
    """(created_at, updated_at, published_at, title, content): created ≤ updated ≤ published."""
    for number in range(1, size + 1):
        written_for = FIRST_PUBLISHED_AT + timedelta(hours=number)
        published_at = written_for
        if number % SCHEDULED_EVERY == 0:
            published_at += SCHEDULED_OFFSET
        yield (
            written_for - WRITTEN_BEFORE,
            written_for - EDITED_BEFORE,
            published_at,
            f"Post number {number}",
            f"Post {number}. " + BODY * (1 + number % 4),
        )


def load_dataset(database_url: str, size: int, *, related_rows: bool = False) -> None:
    """Empty the posts table and its related ones, and fill them with `size` deterministic
    posts (ids 1..size) and, with `related_rows`, their comments and tags (left empty
    otherwise: 100,000 comments take 2-3 s to write, in every repeat; needs_related_rows)."""
    with psycopg.connect(database_url) as connection:
        connection.execute("TRUNCATE posts, comments, post_tags, tags RESTART IDENTITY")
        with connection.cursor().copy(
            "COPY posts (created_at, updated_at, published_at, title, content) FROM STDIN"
        ) as copy:
            for row in dataset_rows(size):
                copy.write_row(row)
        if related_rows:
            load_related_rows(connection)
        connection.commit()
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE posts, comments, post_tags, tags")


def needs_related_rows(paths: Iterable[str]) -> bool:
    """Whether requests to these paths read the posts' comments and tags."""
    return any(path.startswith(RELATED_PREFIX) for path in paths)


def count_posts_titled(database_url: str, titles: list[str]) -> dict[str, int]:
    """Visible posts per title (each arm writes its own title under the harness)."""
    with psycopg.connect(database_url) as connection:
        rows = connection.execute(
            "SELECT title, count(*) FROM posts WHERE NOT is_deleted AND title = ANY(%s) "
            "GROUP BY title",
            (titles,),
        ).fetchall()
    counts = dict.fromkeys(titles, 0)
    counts.update({title: int(count) for title, count in rows})
    return counts
