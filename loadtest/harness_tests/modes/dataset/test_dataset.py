"""`./test.sh dataset`: the benchmark's rows, loaded into DATABASE_URL's database."""

import psycopg

from commons.embedded_postgres import embedded_postgres
from harness_tests.runner import run_in_process, run_runner

RELATED_ROWS = (
    "SELECT md5(string_agg(format('%s %s %s %s', id, post_id, created_at, text), ',' ORDER BY id)) "
    "FROM comments",
    "SELECT md5(string_agg(format('%s %s', post_id, tag_id), ',' ORDER BY post_id, tag_id)) "
    "FROM post_tags",
    "SELECT count(*), min(n), max(n) FROM "
    "(SELECT count(comments.id) AS n FROM posts LEFT JOIN comments ON post_id = posts.id "
    "GROUP BY posts.id) AS per_post",
    "SELECT min(n), max(n) FROM (SELECT count(*) AS n FROM post_tags GROUP BY post_id) AS per_post",
)


def test_dataset_mode_loads_the_same_rows_every_time() -> None:
    with embedded_postgres() as server:
        related = []
        for _ in range(2):  # a second load replaces, never appends
            result = run_runner("dataset", "--dataset-size", "150", DATABASE_URL=server.url)
            assert result.returncode == 0, result.stderr
            assert "Loaded 150 posts, with their comments and tags." in result.stdout
            with psycopg.connect(server.url) as connection:
                related.append([connection.execute(query).fetchone() for query in RELATED_ROWS])
        with psycopg.connect(server.url) as connection:
            row = connection.execute("SELECT count(*), min(id), max(id) FROM posts").fetchone()
            titles = connection.execute("SELECT title FROM posts ORDER BY id LIMIT 2").fetchall()
            dates = connection.execute(
                "SELECT count(*) FILTER (WHERE created_at <= updated_at AND updated_at <= "
                "published_at), min(published_at), max(published_at) FROM posts"
            ).fetchone()
    assert row == (150, 1, 150)
    # Realistic dates: written, then edited, then published; 2020 on, scheduled ones in 2030.
    assert dates[0] == 150
    assert (dates[1].year, dates[2].year) == (2020, 2030)
    assert [title for (title,) in titles] == ["Post number 1", "Post number 2"]
    # The posts' comments and tags, the same rows on both loads: 0 to 20 comments a post (some
    # with none), 1 to 5 tags.
    assert related[0] == related[1]
    comments, tags = related[0][2], related[0][3]
    assert comments[0] == 150 and comments[1] == 0 and 15 <= comments[2] <= 20
    assert tags == (1, 5)


def test_dataset_mode_needs_database_url() -> None:
    result = run_in_process("dataset")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "./test.sh: error: the dataset mode loads into DATABASE_URL, which is not set"
    )
