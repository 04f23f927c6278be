"""Verification before timing (the benchmark's, compare's and the latency mode's): every
scenario answers each arm correctly and in full (under load only cheap checks run), or that
arm's cell publishes nothing."""

import json
from datetime import datetime
from typing import Any

import httpx

from loadtest.lab.dataset import count_posts_titled, needs_related_rows
from loadtest.lab.http import http_client
from loadtest.load.plan import JSON_HEADERS, Request, Scenario

POST_OUT_TYPES: dict[str, type | tuple[type, ...]] = {
    "id": int,
    "published_at": str,
    "updated_at": str,
    "title": str,
    "content": str,
    "is_published": bool,
}

# A related post's rows (commons/related_routes.py): its comments' fields and its tags'.
RELATED_FIELDS = {
    "comments": {"id", "text", "created_at", "word_count"},
    "tags": {"id", "name"},
}


def post_shape_problems(post: Any, related: bool = False) -> list[str]:
    if not isinstance(post, dict):
        return [f"a post is {type(post).__name__}, not an object"]
    expected = set(POST_OUT_TYPES) | (set(RELATED_FIELDS) if related else set())
    if set(post) != expected:
        return [f"post fields are {sorted(post)}, expected {sorted(expected)}"]
    if related and (problem := related_rows_problem(post)):
        return [problem]
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


def related_rows_problem(post: dict[str, Any]) -> str | None:
    for name, fields in RELATED_FIELDS.items():
        rows = post[name]
        if not isinstance(rows, list) or any(
            not isinstance(row, dict) or set(row) != fields for row in rows
        ):
            return f"{name} of post {post['id']} are not a list of {sorted(fields)}"
    return None


def response_problems(response: httpx.Response, expected_status: int) -> list[str]:
    problems = []
    if response.status_code != expected_status:
        problems.append(f"status {response.status_code}, expected {expected_status}")
    if response.headers.get("content-type") != "application/json":
        problems.append(f"content-type {response.headers.get('content-type')!r}")
    return problems


def verify_list(client: httpx.Client, request: Request) -> list[str]:
    response = client.get(request.path)
    problems = response_problems(response, request.status)
    if problems:
        return problems
    body = response.json()
    if not isinstance(body, dict) or set(body) != {"posts"} or not isinstance(body["posts"], list):
        return ['body is not {"posts": [...]}']
    posts = body["posts"]
    if len(posts) != request.count:
        return [f"{len(posts)} posts, expected {request.count}"]
    related = needs_related_rows([request.path])
    for post in posts:
        if problems := post_shape_problems(post, related):
            return problems
    if related and not any(post["comments"] for post in posts):
        return ["no post of the page has a comment: the dataset's related rows are missing"]
    return []


def verify_one(client: httpx.Client, request: Request) -> list[str]:
    """A GET answered by one post (the latency mode's mixed load)."""
    response = client.get(request.path)
    problems = response_problems(response, request.status)
    if problems:
        return problems
    if problems := post_shape_problems(response.json()):
        return problems
    problem = request.problem(response.status_code, response.content)
    return [] if problem is None else [problem]


def verify_write(client: httpx.Client, request: Request, database_url: str) -> list[str]:
    body = json.loads(request.body or "{}")
    rows_before = count_posts_titled(database_url, [body["title"]])[body["title"]]
    response = client.post(request.path, content=request.body, headers=JSON_HEADERS)
    problems = response_problems(response, request.status)
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


def verify_scenario(base_url: str, scenario: Scenario, database_url: str, arm: str) -> list[str]:
    """Problems found with the arm's answer to the scenario (none: it is correct)."""
    request = scenario.request_for(arm)
    try:
        with http_client(base_url=base_url, timeout=30) as client:
            if request.method == "GET" and request.count is None:
                return verify_one(client, request)
            if request.method == "GET":
                return verify_list(client, request)
            return verify_write(client, request, database_url)
    except (httpx.HTTPError, ValueError) as error:
        return [f"{type(error).__name__}: {error}"]
