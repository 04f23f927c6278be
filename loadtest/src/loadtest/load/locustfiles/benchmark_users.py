"""The benchmark's scenarios, one locust user class each: `read`, `synthetic`, `write` (also
what the web UI of `./test.sh up` offers). The paired protocol itself is in paired_user.py."""

from loadtest.load.locustfiles.paired_user import ScenarioUser, check_created, check_post_list
from loadtest.load.scenarios import write_body


class ReadUser(ScenarioUser):
    """GET /posts?per_page=100: a page of posts from the database."""

    scenario = "read"

    def send(self, url: str, name: str, arm: str | None) -> None:
        with self.client.get(url, name=name, catch_response=True) as response:
            check_post_list(response)


class SyntheticUser(ScenarioUser):
    """GET /posts_synthetic?per_page=100: posts built in memory, no database."""

    scenario = "synthetic"

    def send(self, url: str, name: str, arm: str | None) -> None:
        with self.client.get(url, name=name, catch_response=True) as response:
            check_post_list(response)


class WriteUser(ScenarioUser):
    """POST /posts with a fixed body (its title names the arm under the harness)."""

    scenario = "write"

    def send(self, url: str, name: str, arm: str | None) -> None:
        with self.client.post(url, name=name, json=write_body(arm), catch_response=True) as r:
            check_created(r)
