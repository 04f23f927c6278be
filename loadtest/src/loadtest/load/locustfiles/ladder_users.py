"""The ladder's locust user (`./test.sh ladder`): the paired protocol's user, whose arms are
(app, rung) pairs; each arm's base URL is already the rung's URL."""

from commons.synthetic import LADDER_POST_COUNT
from loadtest.load.locustfiles.paired_user import ScenarioUser, check_post_list


class LadderUser(ScenarioUser):
    """GET /ladder/{rung}: the rung of the window's arm, checked like any post list."""

    scenario = "ladder"

    def request_path(self) -> str:
        return ""

    def send(self, url: str, name: str, arm: str | None) -> None:
        with self.client.get(url, name=name, catch_response=True) as response:
            check_post_list(response, LADDER_POST_COUNT)
