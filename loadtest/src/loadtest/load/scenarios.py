"""The lab's three scenarios, READ, READ synthetic and WRITE (the reference experiment's): what
the benchmark loads every arm with, what the web UI offers, what the profile drives."""

import json

from loadtest.load.plan import ARM_PLACEHOLDER, Request, Scenario

READ_PER_PAGE = 100  # as in the reference experiment
POST_LIST_PREFIX = '{"posts":['
POST_MARKER = '"is_published":'  # once per post of an answer
WRITE_TITLE = "Benchmark write"
WRITE_BODY = {
    "title": f"{WRITE_TITLE} by {ARM_PLACEHOLDER}",
    "content": "Written by the load test. " * 8,
    "published_at": "2024-06-01T12:00:00Z",
}


def write_title(arm: str) -> str:
    """The title of the posts an arm writes in WRITE."""
    return f"{WRITE_TITLE} by {arm}"


def post_list(path: str, posts: int) -> Request:
    """A GET answered by `{"posts": [...]}` holding `posts` posts."""
    return Request(
        "GET", path, prefix=POST_LIST_PREFIX, marker=POST_MARKER, count=posts, item="post"
    )


# What examples/lab.toml declares too (a test says the two plans are equal): the fields a
# verification asks for, and for WRITE the fields that differ between arms and its read-back.
POST_LIST_FIELDS = ("posts",)
# READ synthetic's posts are built per request, their times from the clock.
SYNTHETIC_TIMES = ("published_at", "updated_at")
POST_FIELDS = ("id", "title", "content", "published_at", "updated_at", "is_published")
SCENARIOS = {
    scenario.name: scenario
    for scenario in (
        Scenario(
            "read",
            "READ",
            post_list(f"/posts?per_page={READ_PER_PAGE}", READ_PER_PAGE),
            fields=POST_LIST_FIELDS,
        ),
        Scenario(
            "synthetic",
            "READ synthetic",
            post_list(f"/posts_synthetic?per_page={READ_PER_PAGE}", READ_PER_PAGE),
            fields=POST_LIST_FIELDS,
            vary=SYNTHETIC_TIMES,
        ),
        Scenario(
            "write",
            "WRITE",
            Request(
                "POST",
                "/posts",
                json.dumps(WRITE_BODY),
                status=201,
                prefix='{"id":',
            ),
            fields=POST_FIELDS,
            vary=("id", "updated_at"),
            read_back="/posts/{id}",
        ),
    )
}
SCENARIO_NAMES = tuple(SCENARIOS)
