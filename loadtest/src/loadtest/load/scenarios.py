"""What each scenario requests, shared by the locustfile and the verification pass."""

from dataclasses import dataclass

READ_PER_PAGE = 100  # as in the reference experiment
WRITE_BODY = {
    "title": "Benchmark write",
    "content": "Written by the load test. " * 8,
    "published_at": "2024-06-01T12:00:00Z",
}


def write_body(arm: str | None = None) -> dict[str, str]:
    """The POST body; under the harness each arm writes its own title, so the rows each arm
    stored can be counted against the writes it acknowledged while the arms share a table."""
    if arm is None:
        return WRITE_BODY
    return {**WRITE_BODY, "title": write_title(arm)}


def write_title(arm: str) -> str:
    return f"{WRITE_BODY['title']} by {arm}"


@dataclass(frozen=True)
class Scenario:
    name: str
    method: str
    path: str
    expected_status: int
    label: str  # the row name in the table

    @property
    def expected_posts(self) -> int | None:
        return READ_PER_PAGE if self.method == "GET" else None


SCENARIOS = {
    "read": Scenario("read", "GET", f"/posts?per_page={READ_PER_PAGE}", 200, "READ"),
    "synthetic": Scenario(
        "synthetic", "GET", f"/posts_synthetic?per_page={READ_PER_PAGE}", 200, "READ synthetic"
    ),
    "write": Scenario("write", "POST", "/posts", 201, "WRITE"),
}
SCENARIO_NAMES = tuple(SCENARIOS)
