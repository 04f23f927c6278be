"""Verify before timing: every scenario answers correctly, or its cell publishes nothing."""

from datetime import datetime
from typing import Any

import httpx

from commons.ladder import BASE_RUNG, LADDER_PREFIX
from commons.probes.ladder_check import parse_posts, rung_differences
from commons.synthetic import LADDER_POST_COUNT
from loadtest.lab.dataset import count_posts_titled
from loadtest.load.scenarios import Scenario, write_body

POST_OUT_TYPES: dict[str, type | tuple[type, ...]] = {
    "id": int,
    "published_at": str,
    "updated_at": str,
    "title": str,
    "content": str,
    "is_published": bool,
}


def post_shape_problems(post: Any) -> list[str]:
    if not isinstance(post, dict):
        return [f"a post is {type(post).__name__}, not an object"]
    if set(post) != set(POST_OUT_TYPES):
        return [f"post fields are {sorted(post)}, expected {sorted(POST_OUT_TYPES)}"]
    problems = [
        f"{name} is {type(post[name]).__name__}"
        for name, expected in POST_OUT_TYPES.items()
        if not isinstance(post[name], expected)
        or (expected is int and isinstance(post[name], bool))
    ]
    for name in ("published_at", "updated_at"):
        try:
            datetime.fromisoformat(str(post[name]).replace("Z", "+00:00"))
        except ValueError:
            problems.append(f"{name} {post[name]!r} is not an ISO timestamp")
    return problems


def response_problems(response: httpx.Response, expected_status: int) -> list[str]:
    problems = []
    if response.status_code != expected_status:
        problems.append(f"status {response.status_code}, expected {expected_status}")
    if response.headers.get("content-type") != "application/json":
        problems.append(f"content-type {response.headers.get('content-type')!r}")
    return problems


def verify_list(client: httpx.Client, scenario: Scenario) -> list[str]:
    response = client.get(scenario.path)
    problems = response_problems(response, scenario.expected_status)
    if problems:
        return problems
    body = response.json()
    if not isinstance(body, dict) or set(body) != {"posts"} or not isinstance(body["posts"], list):
        return ['body is not {"posts": [...]}']
    posts = body["posts"]
    if len(posts) != scenario.expected_posts:
        return [f"{len(posts)} posts, expected {scenario.expected_posts}"]
    for post in posts:
        if problems := post_shape_problems(post):
            return problems
    return []


def verify_write(
    client: httpx.Client, scenario: Scenario, database_url: str, arm: str | None
) -> list[str]:
    body = write_body(arm)
    rows_before = count_posts_titled(database_url, [body["title"]])[body["title"]]
    response = client.post(scenario.path, json=body)
    problems = response_problems(response, scenario.expected_status)
    if problems:
        return problems
    created = response.json()
    if problems := post_shape_problems(created):
        return problems
    if created["title"] != body["title"] or created["content"] != body["content"]:
        return ["the created post does not echo the request body"]
    read_back = client.get(f"/posts/{created['id']}")
    if read_back.status_code != 200 or read_back.json() != created:
        return [f"the created post is not visible on read-back (status {read_back.status_code})"]
    if count_posts_titled(database_url, [body["title"]])[body["title"]] != rows_before + 1:
        return ["the database does not hold exactly one new row after one POST"]
    return []


def verify_scenario(
    base_url: str, scenario: Scenario, database_url: str, arm: str | None = None
) -> list[str]:
    """Problems found (empty when the scenario's request is correct)."""
    try:
        with httpx.Client(base_url=base_url, timeout=30) as client:
            if scenario.method == "GET":
                return verify_list(client, scenario)
            return verify_write(client, scenario, database_url, arm)
    except (httpx.HTTPError, ValueError) as error:
        return [f"{type(error).__name__}: {error}"]


def verify_ladder(client: httpx.Client, rungs: tuple[str, ...]) -> dict[str, list[str]]:
    """Per rung, how its answer differs from response_model's (commons/probes/ladder_check.py);
    empty lists when every rung answers the same posts. `client` is bound to the app's base
    URL."""
    problems: dict[str, list[str]] = {}
    bodies: dict[str, bytes] = {}
    for rung in (BASE_RUNG, *(rung for rung in rungs if rung != BASE_RUNG)):
        try:
            response = client.get(f"{LADDER_PREFIX}/{rung}")
        except httpx.HTTPError as error:
            problems[rung] = [f"{type(error).__name__}: {error}"]
            continue
        problems[rung] = response_problems(response, 200)
        bodies[rung] = response.content
    if BASE_RUNG not in bodies or problems[BASE_RUNG]:
        return problems
    try:
        count = len(parse_posts(bodies[BASE_RUNG]))
    except ValueError as error:
        problems[BASE_RUNG] = [str(error)]
        return problems
    if count != LADDER_POST_COUNT:
        problems[BASE_RUNG] = [f"{count} posts, expected {LADDER_POST_COUNT}"]
        return problems
    for rung, body in bodies.items():
        if not problems[rung]:
            problems[rung] = rung_differences(bodies[BASE_RUNG], body)
    return problems
