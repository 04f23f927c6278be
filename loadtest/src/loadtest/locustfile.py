"""Locust scenarios, one tag each: `read`, `synthetic`, `write` (also serves the web UI).

Checks are cheap on purpose (status, prefix, item count), so the load generator stays far
from being the bottleneck; the verification pass checks full response shapes before timing.
"""

from locust import FastHttpUser, constant, tag, task

from loadtest.scenarios import SCENARIOS, WRITE_BODY

READ = SCENARIOS["read"]
SYNTHETIC = SCENARIOS["synthetic"]
WRITE = SCENARIOS["write"]
POST_MARKER = b'"is_published":'


class LabUser(FastHttpUser):
    """Shared behaviour: no think time, like `ab -c N` in the reference experiment."""

    abstract = True
    wait_time = constant(0)

    def get_post_list(self, path: str, expected_posts: int | None) -> None:
        with self.client.get(path, name=path, catch_response=True) as response:
            if response.status_code != 200:
                response.failure(f"status {response.status_code}")
            elif not response.content.startswith(b'{"posts":['):
                response.failure("body is not a post list")
            elif response.content.count(POST_MARKER) != expected_posts:
                response.failure(f"expected {expected_posts} posts")


class ReadUser(LabUser):
    @tag("read")
    @task
    def read_posts(self) -> None:
        self.get_post_list(READ.path, READ.expected_posts)

    @tag("synthetic")
    @task
    def read_synthetic_posts(self) -> None:
        self.get_post_list(SYNTHETIC.path, SYNTHETIC.expected_posts)


class WriteUser(LabUser):
    @tag("write")
    @task
    def create_post(self) -> None:
        with self.client.post(WRITE.path, json=WRITE_BODY, catch_response=True) as response:
            if response.status_code != WRITE.expected_status:
                response.failure(f"status {response.status_code}")
            elif b'"id":' not in response.content:
                response.failure("body has no id")
