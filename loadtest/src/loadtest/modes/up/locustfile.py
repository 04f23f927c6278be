"""The web UI's users (`./test.sh up`, and the locust service of docker-compose.yml): one class
per scenario of the lab, READ, READ synthetic, WRITE, READ related (eager and lazy) and the
async twins of the first three, loading the Host the UI names, checked as the benchmark checks
them under load (load/scenarios.py)."""

from locust import FastHttpUser, constant, task

from loadtest.load.locustfiles.checked import send_checked
from loadtest.load.scenarios import SCENARIOS

# The title of the posts the web UI writes (each benchmark arm writes under its own name).
WRITER = "the web UI"


class ScenarioUser(FastHttpUser):
    abstract = True
    wait_time = constant(0)  # like `ab -c N` in the reference experiment
    scenario = ""

    @task
    def send(self) -> None:
        request = SCENARIOS[self.scenario].request_for(WRITER)
        send_checked(self.client, request, request.path, request.path)


class ReadUser(ScenarioUser):
    """GET /posts?per_page=100: a page of posts from the database."""

    scenario = "read"


class SyntheticUser(ScenarioUser):
    """GET /posts_synthetic?per_page=100: posts built in memory, no database."""

    scenario = "synthetic"


class WriteUser(ScenarioUser):
    """POST /posts with a fixed body."""

    scenario = "write"


class RelatedEagerUser(ScenarioUser):
    """GET /posts_related/eager?per_page=20: posts with their comments and tags, 3 statements."""

    scenario = "read-eager"


class RelatedLazyUser(ScenarioUser):
    """GET /posts_related/lazy?per_page=20: the same, loaded lazily, 41 statements."""

    scenario = "read-lazy"


class AsyncReadUser(ScenarioUser):
    """GET /async/posts?per_page=100: READ on an `async def` route and an AsyncSession."""

    scenario = "async-read"


class AsyncSyntheticUser(ScenarioUser):
    """GET /async/posts_synthetic?per_page=100: READ synthetic on an `async def` route."""

    scenario = "async-synthetic"


class AsyncWriteUser(ScenarioUser):
    """POST /async/posts: WRITE on an `async def` route and an AsyncSession."""

    scenario = "async-write"
