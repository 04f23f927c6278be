"""The API contract, run against every app (arm) over HTTP: every endpoint and its status codes."""

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.factories import future_moment, past_moment, post_body

POST_OUT_FIELDS = {"id", "published_at", "updated_at", "title", "content", "is_published"}


def create(client: httpx.Client, **overrides: object) -> dict:
    response = client.post("/posts", json=post_body(**overrides))
    assert response.status_code == 201, response.text
    return response.json()


def parse_instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_create_post_returns_201_and_post_out(client: httpx.Client) -> None:
    response = client.post("/posts", json=post_body(title="Hello", content="World"))
    assert response.status_code == 201
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == POST_OUT_FIELDS
    assert (body["title"], body["content"]) == ("Hello", "World")
    assert parse_instant(body["published_at"]) == datetime(2024, 1, 1, 12, tzinfo=UTC)


def test_read_post_round_trips_what_was_created(client: httpx.Client) -> None:
    created = create(client, title="Round trip")
    response = client.get(f"/posts/{created['id']}")
    assert response.status_code == 200
    assert response.json() == created


@pytest.mark.parametrize(
    ("published_at", "expected"), [(past_moment(), True), (future_moment(), False)]
)
def test_is_published_depends_on_published_at(
    client: httpx.Client, published_at: datetime, expected: bool
) -> None:
    created = create(client, published_at=published_at.isoformat())
    assert created["is_published"] is expected
    assert client.get(f"/posts/{created['id']}").json()["is_published"] is expected


def test_offset_aware_input_is_stored_as_the_same_instant(client: httpx.Client) -> None:
    created = create(client, published_at="2024-06-01T15:00:00+05:30")
    assert parse_instant(created["published_at"]) == datetime(2024, 6, 1, 9, 30, tzinfo=UTC)
    assert created["is_published"] is True


def test_offset_aware_future_input_is_not_published(client: httpx.Client) -> None:
    in_a_day = (datetime.now(UTC) + timedelta(days=1)).astimezone().isoformat()
    assert create(client, published_at=in_a_day)["is_published"] is False


def test_naive_input_means_utc(client: httpx.Client) -> None:
    created = create(client, published_at="2024-06-01T15:00:00")
    assert parse_instant(created["published_at"]) == datetime(2024, 6, 1, 15, tzinfo=UTC)


def test_unicode_round_trips(client: httpx.Client) -> None:
    title, content = "Zürich 🚀 東京", "naïve café — ünïcödé ✓ \u200b"
    created = create(client, title=title, content=content)
    fetched = client.get(f"/posts/{created['id']}").json()
    assert (fetched["title"], fetched["content"]) == (title, content)


def test_list_posts_orders_and_paginates(client: httpx.Client) -> None:
    ids_by_age = [
        create(client, title=f"day {day}", published_at=f"2024-01-{day:02d}T00:00:00Z")["id"]
        for day in (3, 1, 2)
    ]
    oldest_first = [ids_by_age[1], ids_by_age[2], ids_by_age[0]]
    listed = client.get("/posts", params={"per_page": 10})
    assert listed.status_code == 200
    assert [post["id"] for post in listed.json()["posts"]] == oldest_first
    newest = client.get("/posts", params={"order": "desc"}).json()["posts"]
    assert [post["id"] for post in newest] == oldest_first[::-1]
    pages = [
        client.get("/posts", params={"per_page": 2, "page": page}).json()["posts"]
        for page in (0, 1, 2)
    ]
    assert [[post["id"] for post in page] for page in pages] == [
        oldest_first[:2],
        oldest_first[2:],
        [],
    ]


def test_list_posts_defaults_to_ten_per_page(client: httpx.Client) -> None:
    for index in range(12):
        create(client, title=f"post {index}")
    assert len(client.get("/posts").json()["posts"]) == 10


def test_list_posts_accepts_the_largest_page(client: httpx.Client) -> None:
    response = client.get("/posts", params={"per_page": 1000, "page": 1_000_000})
    assert response.status_code == 200
    assert response.json() == {"posts": []}


def test_synthetic_posts_are_built_without_the_database(client: httpx.Client) -> None:
    response = client.get("/posts_synthetic")
    assert response.status_code == 200
    posts = response.json()["posts"]
    assert len(posts) == 100
    assert all(set(post) == POST_OUT_FIELDS for post in posts)
    assert {post["is_published"] for post in posts} == {True, False}
    assert client.get("/posts").json() == {"posts": []}  # nothing was written
    assert len(client.get("/posts_synthetic", params={"per_page": 7}).json()["posts"]) == 7


def test_update_post_replaces_fields(client: httpx.Client) -> None:
    created = create(client, title="before")
    response = client.put(
        f"/posts/{created['id']}",
        json=post_body(title="after", content="new", published_at="2099-01-01T00:00:00Z"),
    )
    assert response.status_code == 200
    updated = response.json()
    assert (updated["title"], updated["content"], updated["is_published"]) == (
        "after",
        "new",
        False,
    )
    assert parse_instant(updated["updated_at"]) > parse_instant(created["updated_at"])
    assert client.get(f"/posts/{created['id']}").json() == updated


def test_delete_post_is_soft_and_hides_it_everywhere(client: httpx.Client) -> None:
    kept, deleted = create(client), create(client)
    response = client.delete(f"/posts/{deleted['id']}")
    assert response.status_code == 204
    assert response.content == b""
    assert client.get(f"/posts/{deleted['id']}").status_code == 404
    assert [post["id"] for post in client.get("/posts").json()["posts"]] == [kept["id"]]
    assert client.delete(f"/posts/{deleted['id']}").status_code == 404
    assert client.put(f"/posts/{deleted['id']}", json=post_body()).status_code == 404


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
@pytest.mark.parametrize("post_id", ["999999", str(2**31), str(-(2**31) - 1), "9" * 30])
def test_missing_post_is_404(client: httpx.Client, method: str, post_id: str) -> None:
    body = post_body() if method == "PUT" else None
    response = client.request(method, f"/posts/{post_id}", json=body)
    assert response.status_code == 404
    assert response.json() == {"detail": "Post not found"}
