"""The latency mode's mixed load: what a large answer does to the requests beside it. Small
requests, one post by id, are offered at the paired rates (and counted), while pages of 1,000
posts are asked beside them at a steady rate of their own, BESIDE_RPS, on connections of their
own (checked, and reported apart): on `def` routes (`mixed`) and on `async def` routes
(`async-mixed`, commons/async_routes.py), in each arm. In an `async def` route FastAPI validates
the large answer on the event loop; in a `def` route it validates it in the thread pool, whose
thread holds the interpreter while it does. Either way it serialises the answer on the event
loop, and every small request that arrives meanwhile waits."""

from dataclasses import dataclass

from loadtest.load.open_loop.client import BesideLoad
from loadtest.load.plan import Request, Scenario
from loadtest.load.scenarios import POST_FIELDS, POST_LIST_FIELDS, SCENARIOS, post_list

SMALL_POST_ID = 1  # the dataset's first post, visible whatever the dataset's size
# The list routes' largest page: commons/routes.py's MAX_PER_PAGE (not imported: it would
# import FastAPI into every command line's start; test_mixed.py checks that they agree).
LARGE_PER_PAGE = 1000
# The large answers a second, in every arm alike: a few, so that the small requests' rates, not
# the large answers, load the arm (a page of 1,000 costs v1 about 40-90 ms of CPU on a 2-vCPU VM).
BESIDE_RPS = 4.0
# Added to a window's seed for its beside load's: both arms of a round get the same arrivals.
BESIDE_SEED_OFFSET = 500_000


@dataclass(frozen=True)
class Beside:
    """What is asked beside a mixed scenario's requests, and how often."""

    scenario: Scenario  # the large answer, verified as a scenario before timing
    rps: float

    def load(self, base_url: str, seed: int) -> BesideLoad:
        """The beside load of one window against the arm at `base_url`."""
        request = self.scenario.request
        return BesideLoad(base_url + request.path, request, self.rps, seed + BESIDE_SEED_OFFSET)

    def as_dict(self) -> dict[str, object]:
        return {"path": self.scenario.path, "rps": self.rps, "label": self.scenario.label}


def small_read(path: str) -> Request:
    return Request("GET", path, prefix=f'{{"id":{SMALL_POST_ID},')


def large_page(prefix: str) -> Scenario:
    return Scenario(
        f"{prefix}large",
        f"a page of {LARGE_PER_PAGE:,} posts",
        post_list(f"{prefix}/posts?per_page={LARGE_PER_PAGE}", LARGE_PER_PAGE),
        fields=POST_LIST_FIELDS,
    )


MIXED_SCENARIOS = {
    "mixed": Scenario(
        "mixed",
        f"one post beside pages of {LARGE_PER_PAGE:,} (def)",
        small_read(f"/posts/{SMALL_POST_ID}"),
        fields=POST_FIELDS,
    ),
    "async-mixed": Scenario(
        "async-mixed",
        f"one post beside pages of {LARGE_PER_PAGE:,} (async def)",
        small_read(f"/async/posts/{SMALL_POST_ID}"),
        fields=POST_FIELDS,
    ),
}
BESIDE = {
    "mixed": Beside(large_page(""), BESIDE_RPS),
    "async-mixed": Beside(large_page("/async"), BESIDE_RPS),
}
# What the latency mode can load: the lab's scenarios and the mixed ones.
LATENCY_SCENARIOS = SCENARIOS | MIXED_SCENARIOS
LATENCY_SCENARIO_NAMES = tuple(LATENCY_SCENARIOS)


def beside_for(name: str, base_url: str, seed: int) -> BesideLoad | None:
    """A window's beside load for scenario `name` (None: it has none)."""
    beside = BESIDE.get(name)
    return None if beside is None else beside.load(base_url, seed)
