"""The payload sweep's endpoints (commons/payload_routes.py, POST /posts_bulk): answers of any
size, flat or nested, the same in every arm; bulk bodies stored all or nothing, or only
validated; and their bounds, each a 422 (or a 413) that names the field and stores nothing."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import psycopg
import pytest

from commons.payloads import (
    COMMENT_TEXT,
    DEFAULT_COMMENTS_PER_POST,
    DEFAULT_PAYLOAD_ITEMS,
    MAX_BULK_POSTS,
    MAX_COMMENTS_PER_POST,
    MAX_PAYLOAD_ITEMS,
    as_instants,
    bulk_post,
)
from tests import loopback
from tests.api.test_validation import assert_422_at
from tests.app_processes import RunningApp
from tests.factories import post_body

POST_FIELDS = {"id", "published_at", "updated_at", "title", "content", "is_published"}


def stored_posts(app: RunningApp) -> int:
    with psycopg.connect(app.database_url) as connection:
        row = connection.execute("SELECT count(*) FROM posts").fetchone()
    assert row is not None
    return int(row[0])


def bulk(count: int, **overrides: Any) -> dict[str, Any]:
    return {"posts": [post_body(title=f"Bulk {number}", **overrides) for number in range(count)]}


def test_flat_answers_the_first_n_posts(client: httpx.Client) -> None:
    posts = client.get("/payloads/flat", params={"items": 7}).json()["posts"]
    assert [post["id"] for post in posts] == list(range(1, 8))
    assert all(set(post) == POST_FIELDS for post in posts)
    # Odd posts were published in 2024, even ones are scheduled for 2121.
    assert [post["is_published"] for post in posts[:2]] == [True, False]
    default = client.get("/payloads/flat").json()["posts"]
    assert len(default) == DEFAULT_PAYLOAD_ITEMS


def test_the_largest_answers_hold_every_post(client: httpx.Client) -> None:
    flat = client.get("/payloads/flat", params={"items": MAX_PAYLOAD_ITEMS})
    assert flat.status_code == 200
    assert len(flat.json()["posts"]) == MAX_PAYLOAD_ITEMS
    nested = client.get(
        "/payloads/nested", params={"items": MAX_PAYLOAD_ITEMS, "comments": MAX_COMMENTS_PER_POST}
    )
    assert nested.status_code == 200
    posts = nested.json()["posts"]
    assert len(posts) == MAX_PAYLOAD_ITEMS
    assert {len(post["comments"]) for post in posts} == {MAX_COMMENTS_PER_POST}


def test_nested_posts_carry_an_author_and_comments(client: httpx.Client) -> None:
    posts = client.get("/payloads/nested", params={"items": 3, "comments": 2}).json()["posts"]
    assert [post["id"] for post in posts] == [1, 2, 3]
    first = posts[0]
    assert set(first) == POST_FIELDS | {"author", "comments"}
    assert first["author"] == {"id": 2, "name": "Author 2"}
    assert [comment["id"] for comment in first["comments"]] == [101, 102]
    comment = first["comments"][0]
    assert set(comment) == {"id", "text", "created_at", "word_count"}
    assert comment["text"] == COMMENT_TEXT
    assert comment["word_count"] == len(COMMENT_TEXT.split())  # the computed field
    default = client.get("/payloads/nested", params={"items": 1}).json()["posts"][0]
    assert len(default["comments"]) == DEFAULT_COMMENTS_PER_POST
    none = client.get("/payloads/nested", params={"items": 1, "comments": 0}).json()["posts"]
    assert none[0]["comments"] == []


def test_every_arm_answers_the_same_payloads(running_apps: dict[str, RunningApp]) -> None:
    """The same posts in every arm, instants compared (the majors spell UTC differently)."""
    for path in ("/payloads/flat?items=50", "/payloads/nested?items=50&comments=4"):
        answers = {
            name: as_instants(loopback.get(f"{app.base_url}{path}", timeout=30).json())
            for name, app in running_apps.items()
        }
        reference = answers["v1"]
        assert {name: answer == reference for name, answer in answers.items()} == dict.fromkeys(
            answers, True
        ), path


@pytest.mark.parametrize("items", ["0", "-1", str(MAX_PAYLOAD_ITEMS + 1), "abc", "1.5", "１０"])
@pytest.mark.parametrize("shape", ["flat", "nested"])
def test_items_beyond_the_bound_are_422(client: httpx.Client, shape: str, items: str) -> None:
    assert_422_at(client.get(f"/payloads/{shape}", params={"items": items}), "query", "items")


@pytest.mark.parametrize("comments", ["-1", str(MAX_COMMENTS_PER_POST + 1), "x", "٣"])
def test_comments_beyond_the_bound_are_422(client: httpx.Client, comments: str) -> None:
    response = client.get("/payloads/nested", params={"comments": comments})
    assert_422_at(response, "query", "comments")


def test_bulk_stores_every_post_and_answers_their_ids_in_order(
    client: httpx.Client, app: RunningApp
) -> None:
    body = {"posts": [post_body(title=f"Bulk {number}") for number in range(5)]}
    response = client.post("/posts_bulk", json=body)
    assert response.status_code == 201, response.text
    ids = response.json()["ids"]
    assert len(set(ids)) == 5
    titles = [client.get(f"/posts/{post_id}").json()["title"] for post_id in ids]
    assert titles == [f"Bulk {number}" for number in range(5)]
    assert stored_posts(app) == 5


def test_bulk_takes_the_largest_body(client: httpx.Client, app: RunningApp) -> None:
    body = {"posts": [bulk_post(number) for number in range(MAX_BULK_POSTS)]}
    response = client.post("/posts_bulk", json=body)
    assert response.status_code == 201, response.text[:500]
    assert len(response.json()["ids"]) == MAX_BULK_POSTS
    assert stored_posts(app) == MAX_BULK_POSTS


BAD_BULK_BODIES = {
    "empty list": ({"posts": []}, ("body", "posts")),
    "over the bound": (bulk(MAX_BULK_POSTS + 1), ("body", "posts")),
    "not a list": ({"posts": post_body()}, ("body", "posts")),
    "a bare list": ([post_body()], ("body",)),
    "one bad post in the middle": (
        {"posts": [post_body(), post_body(), post_body(title="\u0000"), post_body()]},
        ("body", "posts", 2, "title"),
    ),
    "one post without a date": (
        {"posts": [post_body(), {"title": "t", "content": "c"}]},
        ("body", "posts", 1, "published_at"),
    ),
}


@pytest.mark.parametrize("case", BAD_BULK_BODIES)
@pytest.mark.parametrize("path", ["/posts_bulk", "/payloads/validate"])
def test_bad_bulk_bodies_are_422_and_store_nothing(
    client: httpx.Client, app: RunningApp, path: str, case: str
) -> None:
    body, location = BAD_BULK_BODIES[case]
    assert_422_at(client.post(path, json=body), *location)
    assert stored_posts(app) == 0


@pytest.mark.parametrize("path", ["/posts_bulk", "/payloads/validate"])
def test_a_bulk_body_over_the_byte_limit_is_413(
    client: httpx.Client, app: RunningApp, path: str
) -> None:
    # 20 posts of 60,000 characters: far inside the count bound, over 1 MiB.
    response = client.post(path, json=bulk(20, content="x" * 60_000))
    assert response.status_code == 413, response.text
    assert stored_posts(app) == 0


def test_validate_only_answers_the_count_and_stores_nothing(
    client: httpx.Client, app: RunningApp
) -> None:
    response = client.post("/payloads/validate", json=bulk(3))
    assert response.status_code == 200, response.text
    assert response.json() == {"count": 3}
    assert stored_posts(app) == 0


@contextmanager
def insert_fails_for_title(app: RunningApp, title: str) -> Iterator[None]:
    """A trigger that fails the INSERT of a row with this title, as a constraint, a full disk
    or a cancelled statement would, after the rows before it were written."""
    with psycopg.connect(app.database_url, autocommit=True) as connection:
        connection.execute(
            f"""
            CREATE FUNCTION fail_for_title() RETURNS trigger AS $$
            BEGIN
                IF NEW.title = '{title}' THEN
                    RAISE EXCEPTION 'refused by the test';
                END IF;
                RETURN NEW;
            END $$ LANGUAGE plpgsql;
            CREATE TRIGGER fail_for_title BEFORE INSERT ON posts
                FOR EACH ROW EXECUTE FUNCTION fail_for_title();
            """
        )
    try:
        yield
    finally:
        with psycopg.connect(app.database_url, autocommit=True) as connection:
            connection.execute("DROP TRIGGER fail_for_title ON posts")
            connection.execute("DROP FUNCTION fail_for_title()")


def test_a_bulk_write_that_fails_mid_batch_stores_nothing(
    client: httpx.Client, app: RunningApp
) -> None:
    body = {"posts": [bulk_post(number) for number in range(600)]}
    body["posts"][400]["title"] = "fails here"
    with insert_fails_for_title(app, "fails here"):
        response = client.post("/posts_bulk", json=body)
    assert response.status_code == 503, response.text
    assert stored_posts(app) == 0
    # The same body, once the database takes it, is stored whole.
    assert client.post("/posts_bulk", json=body).status_code == 201
    assert stored_posts(app) == 600
