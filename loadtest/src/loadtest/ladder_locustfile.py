"""The ladder's locust user (`./test.sh ladder`, loadtest/ladder.py): the paired protocol's
user, whose arms are (app, rung) pairs; each arm's base URL is already the rung's URL.

A file of its own, so the web UI of `./test.sh up` keeps offering only the three scenarios."""

# Imported for what it registers too: the --schedule option and the stats-file listener.
from commons.synthetic import LADDER_POST_COUNT
from loadtest.locustfile import ScenarioUser, check_post_list


class LadderUser(ScenarioUser):
    """GET /ladder/{rung}: the rung of the window's arm, checked like any post list."""

    scenario = "ladder"

    def request_path(self) -> str:
        return ""

    def send(self, url: str, name: str, arm: str | None) -> None:
        with self.client.get(url, name=name, catch_response=True) as response:
            check_post_list(response, LADDER_POST_COUNT)
