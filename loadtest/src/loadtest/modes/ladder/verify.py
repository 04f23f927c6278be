"""The ladder verifies before it times: every rung of an app answers the same posts as its
response_model (commons/probes/ladder_check.py), or nothing is timed."""

import httpx

from commons.ladder import BASE_RUNG, LADDER_PREFIX
from commons.probes.ladder_check import parse_posts, rung_differences
from commons.synthetic import LADDER_POST_COUNT


def verify_ladder(client: httpx.Client, rungs: tuple[str, ...]) -> dict[str, list[str]]:
    """Per rung, how its answer differs from response_model's (commons/probes/ladder_check.py);
    empty lists when every rung answers the same posts. `client` is bound to the app's base
    URL."""
    problems: dict[str, list[str]] = {}
    bodies: dict[str, bytes] = {}
    for rung in (BASE_RUNG, *(rung for rung in rungs if rung != BASE_RUNG)):
        try:
            response = client.get(f"{LADDER_PREFIX}/{rung}")
        except httpx.HTTPError as error:
            problems[rung] = [f"{type(error).__name__}: {error}"]
            continue
        problems[rung] = answer_problems(response)
        bodies[rung] = response.content
    if BASE_RUNG not in bodies or problems[BASE_RUNG]:
        return problems
    try:
        count = len(parse_posts(bodies[BASE_RUNG]))
    except ValueError as error:
        problems[BASE_RUNG] = [str(error)]
        return problems
    if count != LADDER_POST_COUNT:
        problems[BASE_RUNG] = [f"{count} posts, expected {LADDER_POST_COUNT}"]
        return problems
    for rung, body in bodies.items():
        if not problems[rung]:
            problems[rung] = rung_differences(bodies[BASE_RUNG], body)
    return problems


def answer_problems(response: httpx.Response) -> list[str]:
    problems = []
    if response.status_code != 200:
        problems.append(f"status {response.status_code}, expected 200")
    if response.headers.get("content-type") != "application/json":
        problems.append(f"content-type {response.headers.get('content-type')!r}")
    return problems
