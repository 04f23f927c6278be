"""`./test.sh dataset`: the benchmark's rows, loaded into DATABASE_URL's database."""

import psycopg

from commons.embedded_postgres import embedded_postgres
from harness_tests.runner import run_in_process, run_runner


def test_dataset_mode_loads_the_same_rows_every_time() -> None:
    with embedded_postgres() as server:
        for _ in range(2):  # a second load replaces, never appends
            result = run_runner("dataset", "--dataset-size", "150", DATABASE_URL=server.url)
            assert result.returncode == 0, result.stderr
            assert "Loaded 150 posts." in result.stdout
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


def test_dataset_mode_needs_database_url() -> None:
    result = run_in_process("dataset")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "./test.sh: error: the dataset mode loads into DATABASE_URL, which is not set"
    )
