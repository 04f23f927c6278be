"""The `async def` routes (commons/async_routes.py): each answers the same JSON as its `def`
twin in every arm, writes what POST /posts writes, counts its statements as the sync routes
do, and refuses what they refuse."""

from typing import Any

import httpx
import pytest

from commons.payloads import as_instants
from tests import loopback
from tests.api.test_related_rows import fill
from tests.api.test_validation import assert_422_at
from tests.app_processes import RunningApp
from tests.database_helpers import truncate_posts
from tests.factories import post_body

TWINS = (
    ("/posts?per_page=30&page=1", "/async/posts?per_page=30&page=1"),
    ("/posts", "/async/posts"),
    ("/posts_related/eager?per_page=7&page=2", "/async/posts_related/eager?per_page=7&page=2"),
    ("/posts_related/eager", "/async/posts_related/eager"),
    ("/posts/3", "/async/posts/3"),
)


def get(app: RunningApp, path: str) -> Any:
    answer = loopback.get(f"{app.base_url}{path}", timeout=30)
    assert answer.status_code == 200, (path, answer.text[:200])
    return answer.json()


def test_each_async_read_answers_what_its_def_twin_answers(
    running_apps: dict[str, RunningApp],
) -> None:
    for app in running_apps.values():
        fill(app.database_url)
    try:
        answers = {
            (name, path): as_instants(get(app, path))
            for name, app in running_apps.items()
            for twin in TWINS
            for path in twin
        }
    finally:
        for app in running_apps.values():
            truncate_posts(app.database_url)
    for name in running_apps:
        for sync_path, async_path in TWINS:
            assert answers[name, async_path] == answers[name, sync_path], (name, async_path)
            assert answers[name, async_path] == answers["v1", sync_path], (name, async_path)
    assert len(answers["v1", "/async/posts?per_page=30&page=1"]["posts"]) == 15  # 45 posts


def test_the_async_synthetic_list_is_the_def_one(client: httpx.Client) -> None:
    def shape(path: str) -> list[dict[str, Any]]:
        posts = client.get(path).json()["posts"]
        # Built per request, from the clock: everything but the times is fixed.
        return [{k: v for k, v in post.items() if not k.endswith("_at")} for post in posts]

    assert shape("/async/posts_synthetic?per_page=12") == shape("/posts_synthetic?per_page=12")
    assert len(shape("/async/posts_synthetic")) == 100


def test_an_async_write_is_stored_and_read_back(client: httpx.Client) -> None:
    created = client.post("/async/posts", json=post_body(title="Async"))
    assert created.status_code == 201
    body = created.json()
    assert client.get(f"/posts/{body['id']}").json() == body
    assert set(body) == {"id", "published_at", "updated_at", "title", "content", "is_published"}


def test_an_async_read_of_a_missing_or_deleted_post_is_404(client: httpx.Client) -> None:
    post_id = client.post("/posts", json=post_body()).json()["id"]
    assert client.get(f"/async/posts/{post_id}").status_code == 200
    assert client.delete(f"/posts/{post_id}").status_code == 204
    for path in (f"/async/posts/{post_id}", "/async/posts/0", f"/async/posts/{2**31}"):
        answer = client.get(path)
        assert answer.status_code == 404, path
        assert answer.json() == {"detail": "Post not found"}


def test_an_async_read_of_a_post_id_that_is_not_an_ascii_integer_is_422(
    client: httpx.Client,
) -> None:
    for post_id in ("１", "abc", "1.5"):
        assert_422_at(client.get(f"/async/posts/{post_id}"), "path", "post_id")


def statements_of(client: httpx.Client, method: str, path: str, **options: Any) -> tuple[int, int]:
    before = client.get("/statements").json()
    assert client.request(method, path, **options).status_code in (200, 201)
    after = client.get("/statements").json()
    return after["statements"] - before["statements"], after["sessions"] - before["sessions"]


def test_the_async_engine_s_statements_are_counted(client: httpx.Client) -> None:
    assert statements_of(client, "GET", "/async/posts") == (1, 1)
    assert statements_of(client, "GET", "/async/posts_related/eager") == (1, 1)  # no posts
    assert statements_of(client, "POST", "/async/posts", json=post_body()) == (1, 1)
    assert statements_of(client, "GET", "/async/posts_related/eager") == (3, 1)  # one post
    post_id = client.get("/posts").json()["posts"][0]["id"]
    assert statements_of(client, "GET", f"/async/posts/{post_id}") == (1, 1)


@pytest.mark.parametrize(
    ("path", "name", "value"),
    [
        ("/async/posts", "per_page", "0"),
        ("/async/posts", "page", "-1"),
        ("/async/posts_synthetic", "per_page", "１０"),
        ("/async/posts_related/eager", "per_page", "101"),
    ],
)
def test_bounds_are_422_naming_the_field(
    client: httpx.Client, path: str, name: str, value: str
) -> None:
    assert_422_at(client.get(path, params={name: value}), "query", name)


def test_an_invalid_async_write_is_422_and_stores_nothing(client: httpx.Client) -> None:
    answer = client.post("/async/posts", json=post_body(title="x" * 301))
    assert_422_at(answer, "body", "title")
    assert client.get("/posts").json() == {"posts": []}
