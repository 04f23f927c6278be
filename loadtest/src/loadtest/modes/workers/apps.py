"""What the workers serve, per target and arm: a generated app (scale's generator, in the arm's
own idiom, written once into a scratch folder and compiled by the arm's interpreter) or the
lab's own app over the run's database; and the routes every worker must serve."""

import json
from dataclasses import dataclass
from pathlib import Path

from commons import HTTP_PROTOCOL
from loadtest.generated.apps import compile_app, normalised
from loadtest.generated.generator import MODULE, ScaleApp, generate, routes_of
from loadtest.generated.subjects import idiom_of
from loadtest.lab.arms import ARMS, arm_python
from loadtest.load.plan import ARM_PLACEHOLDER
from loadtest.load.scenarios import DEFAULT_SCENARIOS, SCENARIOS
from loadtest.modes.workers.routes import WarmRoute
from loadtest.modes.workers.settings import Target

LAB_DATASET_POSTS = 1_000  # what the lab's app reads: a page is 100 of them
# The generated apps are served as scale serves them, by uvicorn's default protocol (the lab's
# bounded one lives in commons, whose import would count in every generated app); the lab's
# apps by the lab's bounded protocol, as every other mode serves them.
GENERATED_HTTP = "auto"


@dataclass(frozen=True)
class AppUnderTest:
    """A target's app for one arm: its `module:app`, its PYTHONPATH, its protocol, its
    database, and the routes every worker must serve."""

    module: str
    pythonpath: str | None
    http: str
    database_url: str
    routes: tuple[WarmRoute, ...]


def generated_app(target: Target, arm: str, seed: int, scratch: Path) -> AppUnderTest:
    app = ScaleApp(idiom_of(arm), target.size, seed=seed, shape=target.shape)
    folder = scratch / app.slug
    if not folder.exists():
        generate(app, folder)
    compile_app(folder, arm_python(arm))  # as a deployed service starts: from bytecode
    routes = tuple(
        WarmRoute(route.method, route.path, route.body, normalised(route.expected))
        for route in routes_of(app)
    )
    return AppUnderTest(MODULE, str(folder), GENERATED_HTTP, "", routes)


def lab_routes(arm: str) -> tuple[WarmRoute, ...]:
    """The benchmark's three requests (READ, READ synthetic, WRITE), one post by id and
    /health: each answer's status is checked (the benchmark's verification checks them whole)."""
    routes = [WarmRoute("GET", "/health"), WarmRoute("GET", "/posts/1")]
    for name in DEFAULT_SCENARIOS:  # not the related rows' pages: the dataset has none here
        request = SCENARIOS[name].request
        body = request.body.replace(ARM_PLACEHOLDER, arm) if request.body else None
        routes.append(
            WarmRoute(
                request.method,
                request.path,
                json.loads(body) if body else None,
                status=request.status,
            )
        )
    return tuple(routes)


def lab_app(arm: str, database_url: str) -> AppUnderTest:
    return AppUnderTest(ARMS[arm].module, None, HTTP_PROTOCOL, database_url, lab_routes(arm))
