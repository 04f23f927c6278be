"""The related rows' routes (commons/related_routes.py): a page of posts with their comments and
tags, the same JSON in every arm and both ways of loading them; the SQL statements each way
sends, counted at the engine (GET /statements); and their bounds, each a 422 naming the field."""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
import pytest

from commons.payloads import as_instants
from commons.related_routes import DEFAULT_RELATED_PER_PAGE, MAX_RELATED_PER_PAGE
from commons.related_rows import load_related_rows
from tests import loopback
from tests.api.test_validation import assert_422_at
from tests.app_processes import RunningApp
from tests.database_helpers import truncate_posts

POSTS = 45  # two full pages of 20 and a part one
SCHEDULED = datetime(2121, 1, 1, tzinfo=UTC)


def fill(database_url: str) -> None:
    """POSTS posts (every fifth scheduled) with their comments and tags, the same in every
    arm's database."""
    truncate_posts(database_url)
    published = datetime(2024, 1, 1, tzinfo=UTC)
    with psycopg.connect(database_url) as connection:
        for number in range(1, POSTS + 1):
            moment = SCHEDULED if number % 5 == 0 else published + timedelta(hours=number)
            connection.execute(
                "INSERT INTO posts (created_at, updated_at, published_at, title, content) "
                "VALUES (%s, %s, %s, %s, %s)",
                (published, published, moment, f"Post {number}", "Some content. " * number),
            )
        load_related_rows(connection)


@pytest.fixture
def filled_apps(running_apps: dict[str, RunningApp]) -> Iterator[dict[str, RunningApp]]:
    for app in running_apps.values():
        fill(app.database_url)
    yield running_apps
    for app in running_apps.values():
        truncate_posts(app.database_url)


def page(app: RunningApp, loading: str, **params: Any) -> httpx.Response:
    return loopback.get(f"{app.base_url}/posts_related/{loading}", params=params, timeout=30)


def test_every_arm_answers_the_same_posts_with_their_rows(
    filled_apps: dict[str, RunningApp],
) -> None:
    """Eager and lazy answer the same JSON, in every arm (instants compared: the majors spell
    UTC differently); a page holds posts with comments and tags as the dataset drew them."""
    for params in ({}, {"per_page": 7, "page": 3}, {"per_page": MAX_RELATED_PER_PAGE}):
        answers = {
            (name, loading): as_instants(page(app, loading, **params).json())
            for name, app in filled_apps.items()
            for loading in ("eager", "lazy")
        }
        reference = answers["v1", "eager"]
        assert {key: answer == reference for key, answer in answers.items()} == dict.fromkeys(
            answers, True
        ), params
    posts = answers["v1", "eager"]["posts"]
    assert len(posts) == POSTS
    assert [post["id"] for post in posts[:3]] == [1, 2, 3]
    assert set(posts[0]) == {
        "id",
        "published_at",
        "updated_at",
        "title",
        "content",
        "is_published",
        "comments",
        "tags",
    }
    assert {post["is_published"] for post in posts} == {True, False}
    assert all(1 <= len(post["tags"]) <= 5 for post in posts)
    assert (
        any(not post["comments"] for post in posts)
        and max(len(post["comments"]) for post in posts) > 10
    )
    comment = next(comment for post in posts for comment in post["comments"])
    assert set(comment) == {"id", "text", "created_at", "word_count"}
    assert comment["word_count"] == len(comment["text"].split())  # the computed field
    tag_ids = [tag["id"] for tag in posts[0]["tags"]]
    assert tag_ids == sorted(tag_ids) and posts[0]["tags"][0]["name"].startswith("tag-")


def statements_of(app: RunningApp, path: str) -> tuple[int, int]:
    """(statements, sessions) the app counted while answering one request."""
    before = loopback.get(f"{app.base_url}/statements", timeout=30).json()
    assert loopback.get(f"{app.base_url}{path}", timeout=30).status_code == 200
    after = loopback.get(f"{app.base_url}/statements", timeout=30).json()
    assert after["pid"] == before["pid"]
    return after["statements"] - before["statements"], after["sessions"] - before["sessions"]


def test_lazy_loading_sends_two_statements_per_post_and_eager_three_in_all(
    filled_apps: dict[str, RunningApp],
) -> None:
    per_page = DEFAULT_RELATED_PER_PAGE
    for name, app in filled_apps.items():
        counted = {
            "lazy": statements_of(app, "/posts_related/lazy"),
            "eager": statements_of(app, "/posts_related/eager"),
            "eager, a larger page": statements_of(app, "/posts_related/eager?per_page=40"),
            "a post list": statements_of(app, "/posts"),
            "/health": statements_of(app, "/health"),  # its own probe is not counted
            "no database": statements_of(app, "/posts_synthetic"),
        }
        assert counted == {
            "lazy": (1 + 2 * per_page, 1),
            "eager": (3, 1),
            "eager, a larger page": (3, 1),
            "a post list": (1, 1),
            "/health": (0, 0),
            "no database": (0, 0),
        }, name


@pytest.mark.parametrize("loading", ["eager", "lazy"])
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("per_page", "0"),
        ("per_page", str(MAX_RELATED_PER_PAGE + 1)),
        ("per_page", "１０"),  # full-width digits: every arm reads ASCII only
        ("page", "-1"),
        ("page", "x"),
    ],
)
def test_bounds_are_422_naming_the_field(
    client: httpx.Client, loading: str, name: str, value: str
) -> None:
    assert_422_at(client.get(f"/posts_related/{loading}", params={name: value}), "query", name)


def test_an_empty_table_is_an_empty_page(client: httpx.Client) -> None:
    for loading in ("eager", "lazy"):
        answer = client.get(f"/posts_related/{loading}")
        assert (answer.status_code, answer.json()) == (200, {"posts": []})
