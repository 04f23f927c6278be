"""The serialisation ladder (commons/ladder.py): every rung of every app answers the same posts
as response_model, and the check the harness runs before timing catches a rung that does not."""

import json
from datetime import UTC, datetime, timedelta, timezone

import httpx
import pytest

from commons.ladder import BASE_RUNG, LADDER_PREFIX, RUNG_NAMES
from commons.probes.ladder_check import parse_posts, rung_differences
from commons.synthetic import LADDER_POST_COUNT
from tests import loopback
from tests.app_processes import RunningApp


def rung_body(client: httpx.Client, rung: str) -> bytes:
    response = client.get(f"{LADDER_PREFIX}/{rung}")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    return response.content


@pytest.mark.parametrize("rung", RUNG_NAMES)
def test_every_rung_answers_the_posts_of_response_model(client: httpx.Client, rung: str) -> None:
    reference = rung_body(client, BASE_RUNG)
    assert rung_differences(reference, rung_body(client, rung)) == []


def test_the_ladder_posts_are_what_the_reference_answers(client: httpx.Client) -> None:
    posts = parse_posts(rung_body(client, BASE_RUNG))
    assert [post["id"] for post in posts] == list(range(1, LADDER_POST_COUNT + 1))
    # Both branches of is_published, and microseconds that every rung has to render.
    assert {post["is_published"] for post in posts} == {True, False}
    assert all(post["published_at"].year in (2024, 2121) for post in posts)
    assert posts[0]["updated_at"] == datetime(2024, 1, 2, 0, 0, 0, 1237, tzinfo=UTC)


def test_the_ladder_is_the_same_in_every_app(running_apps: dict[str, RunningApp]) -> None:
    bodies = {
        name: loopback.get(f"{app.base_url}{LADDER_PREFIX}/{BASE_RUNG}", timeout=30).content
        for name, app in running_apps.items()
    }
    first = next(iter(bodies.values()))
    assert {name: rung_differences(first, body) for name, body in bodies.items()} == {
        name: [] for name in bodies
    }


def test_a_rung_with_different_posts_is_rejected(client: httpx.Client) -> None:
    reference = rung_body(client, BASE_RUNG)
    document = json.loads(rung_body(client, "plain_orjson"))
    document["posts"][7]["title"] = "Changed"
    document["posts"][8]["published_at"] = "2024-01-01T09:00:00.000001+00:00"
    problems = rung_differences(reference, json.dumps(document).encode())
    assert problems == [
        "post 7 (id 8): title is 'Changed', expected 'Ladder post 8'",
        "post 8 (id 9): published_at is datetime.datetime(2024, 1, 1, 9, 0, 0, 1, "
        "tzinfo=datetime.timezone.utc), expected datetime.datetime(2024, 1, 1, 9, 0, "
        "tzinfo=datetime.timezone.utc)",
    ]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d["posts"].pop(), f"{LADDER_POST_COUNT - 1} posts, expected"),
        (lambda d: d["posts"][0].update(is_published=1), "is_published is 1, expected"),
        (lambda d: d["posts"][0].pop("content"), "does not have exactly the fields"),
        (lambda d: d["posts"][0].update(updated_at="2024-01-02T00:00:00"), "no time zone"),
        (lambda d: d.update(extra=1), 'not {"posts": [...]}'),
    ],
)
def test_rejects_missing_posts_fields_and_types(client: httpx.Client, change, problem) -> None:  # noqa: ANN001
    reference = rung_body(client, BASE_RUNG)
    document = json.loads(reference)
    change(document)
    problems = rung_differences(reference, json.dumps(document).encode())
    assert problems and problem in problems[0], problems


def test_an_instant_written_another_way_is_the_same_post(client: httpx.Client) -> None:
    reference = rung_body(client, BASE_RUNG)
    document = json.loads(reference)
    for post in document["posts"]:
        moment = datetime.fromisoformat(post["published_at"].replace("Z", "+00:00"))
        post["published_at"] = moment.astimezone(timezone(timedelta(hours=5))).isoformat()
    assert document["posts"][0]["published_at"].endswith("+05:00")
    assert rung_differences(reference, json.dumps(document).encode()) == []
