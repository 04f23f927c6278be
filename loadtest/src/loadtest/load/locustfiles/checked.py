"""A request sent by a locust user and its answer checked cheaply (load/plan.py's Request):
what the paired user and the web UI's users share."""

from typing import Any

from loadtest.load.plan import JSON_HEADERS, Request


def send_checked(client: Any, request: Request, url: str, name: str) -> None:
    """`client`: a FastHttpUser's; a wrong answer counts as a failure under `name`."""
    with client.request(
        request.method,
        url,
        name=name,
        data=request.body,
        headers=JSON_HEADERS if request.body is not None else None,
        catch_response=True,
    ) as response:
        problem = request.problem(response.status_code, response.content or b"")
        if problem is not None:
            response.failure(problem)
