"""Locust scenarios, one tag each: `read`, `synthetic`, `write` (also serves the web UI).

Checks are cheap on purpose (status, prefix, item count), so the load generator stays far
from being the bottleneck; the verification pass checks full response shapes before timing.
"""

from locust import FastHttpUser, constant, events, tag, task
from locust.runners import WorkerRunner

from loadtest.scenarios import SCENARIOS, WRITE_BODY

READ_PATH = SCENARIOS["read"].path
SYNTHETIC_PATH = SCENARIOS["synthetic"].path
POSTS_PER_LIST = SCENARIOS["read"].expected_posts
WRITE_PATH = SCENARIOS["write"].path
LIST_PREFIX = b'{"posts":['
POST_MARKER = b'"is_published":'


@events.init.add_listener
def leave_the_stats_file_to_the_master(environment, **_kwargs) -> None:  # noqa: ANN001
    """With --processes, forked workers inherit --json-file and write their own (empty) stats
    to it on exit, racing the master's; only the master may write it."""
    if isinstance(environment.runner, WorkerRunner) and environment.parsed_options:
        environment.parsed_options.json_file = None


def check_post_list(response) -> None:  # noqa: ANN001 - locust's response context manager
    if response.status_code != 200:
        response.failure(f"status {response.status_code}")
    elif not response.content.startswith(LIST_PREFIX):
        response.failure("body is not a post list")
    elif response.content.count(POST_MARKER) != POSTS_PER_LIST:
        response.failure(f"expected {POSTS_PER_LIST} posts")


# One user class per scenario, and the runner picks classes by name, never with --tags:
# with several classes in the file, `--tags` made locust 2.47 burn about a third more CPU
# per request (measured: 600 vs 910 r/s from one core against the same endpoint). Every
# class has no think time, like `ab -c N` in the reference experiment.


class ReadUser(FastHttpUser):
    """GET /posts?per_page=100: a page of posts from the database."""

    wait_time = constant(0)

    @tag("read")
    @task
    def read_posts(self) -> None:
        with self.client.get(READ_PATH, catch_response=True) as response:
            check_post_list(response)


class SyntheticUser(FastHttpUser):
    """GET /posts_synthetic?per_page=100: posts built in memory, no database."""

    wait_time = constant(0)

    @tag("synthetic")
    @task
    def read_synthetic_posts(self) -> None:
        with self.client.get(SYNTHETIC_PATH, catch_response=True) as response:
            check_post_list(response)


class WriteUser(FastHttpUser):
    """POST /posts with a fixed body."""

    wait_time = constant(0)

    @tag("write")
    @task
    def create_post(self) -> None:
        with self.client.post(WRITE_PATH, json=WRITE_BODY, catch_response=True) as response:
            if response.status_code != 201:
                response.failure(f"status {response.status_code}")
            elif b'"id":' not in response.content:
                response.failure("body has no id")
