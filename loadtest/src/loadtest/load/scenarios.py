"""The lab's scenarios: READ, READ synthetic and WRITE (the reference experiment's), what the
benchmark loads every arm with by default, what the web UI offers, what the profile drives; and
READ related, eager and lazy (a page of posts with their comments and tags, commons/
related_routes.py), and the `async def` twins of the first three, run when asked
(--scenarios)."""

import json
from dataclasses import replace

from commons.related_rows import RELATED_PREFIX
from loadtest.load.plan import ARM_PLACEHOLDER, Request, Scenario, ScenarioTimetable

READ_PER_PAGE = 100  # as in the reference experiment
RELATED_PER_PAGE = 20  # a page of 20 posts: 41 statements lazily, 3 eagerly
# What --fit chose for them on a 2-vCPU VM (2026-11-28): 4 users kept every arm's CPU busy, and
# v1's lazy page took 40 ms of CPU (25 r/s). Under the benchmark's 10 users, 0.6 s windows and
# 0.2 s settle, its requests outlasted the settle and the next arm's windows began with the
# previous arm still busy, in every window.
RELATED_TIMETABLE = ScenarioTimetable(
    users=4,
    window_s=3.0,
    settle_s=0.5,
    why="users 4, windows 3 s, settle 0.5 s: the scenario's own (a page with its rows costs "
    "10-40 ms of CPU, where the benchmark's 10 users and 0.6 s windows are for ~3 ms requests)",
)
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
        Scenario(
            "read-eager",
            "READ related, eager",
            post_list(f"{RELATED_PREFIX}/eager?per_page={RELATED_PER_PAGE}", RELATED_PER_PAGE),
            fields=POST_LIST_FIELDS,
            timetable=RELATED_TIMETABLE,
        ),
        Scenario(
            "read-lazy",
            "READ related, lazy",
            post_list(f"{RELATED_PREFIX}/lazy?per_page={RELATED_PER_PAGE}", RELATED_PER_PAGE),
            fields=POST_LIST_FIELDS,
            timetable=RELATED_TIMETABLE,
        ),
    )
}
# The `async def` twins of READ, READ synthetic and WRITE (commons/async_routes.py), on an
# AsyncSession: the same answers, validated and serialised on the event loop.
SCENARIOS |= {
    scenario.name: scenario
    for scenario in (
        replace(
            SCENARIOS["read"],
            name="async-read",
            label="READ async",
            request=post_list(f"/async/posts?per_page={READ_PER_PAGE}", READ_PER_PAGE),
        ),
        replace(
            SCENARIOS["synthetic"],
            name="async-synthetic",
            label="READ synthetic async",
            request=post_list(f"/async/posts_synthetic?per_page={READ_PER_PAGE}", READ_PER_PAGE),
        ),
        replace(
            SCENARIOS["write"],
            name="async-write",
            label="WRITE async",
            request=replace(SCENARIOS["write"].request, path="/async/posts"),
        ),
    )
}
SCENARIO_NAMES = tuple(SCENARIOS)
# What the benchmark measures unless told (--scenarios), and every published run measured.
DEFAULT_SCENARIOS = ("read", "synthetic", "write")
