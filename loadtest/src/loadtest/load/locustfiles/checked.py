"""A request sent by a locust user and its answer checked cheaply (load/plan.py's Request):
what the paired user and the web UI's users share."""

import itertools
import os
import time
from typing import Any

from loadtest.load.plan import COUNTER_PLACEHOLDER, JSON_HEADERS, Request


# A numbered body's "{n}": this process's start (ms) and pid, fixed width, then a count, so
# every request of every locust process of every run gets a number of its own. Locust's
# --processes forks its workers after importing this: each child starts afresh.
def number_prefix() -> str:
    return f"{int(time.time() * 1000)}{os.getpid() % 100_000:05d}"


NUMBERS = {"prefix": number_prefix(), "count": itertools.count(1)}


def start_numbering_afresh() -> None:
    NUMBERS["prefix"], NUMBERS["count"] = number_prefix(), itertools.count(1)


os.register_at_fork(after_in_child=start_numbering_afresh)


def next_number() -> str:
    return f"{NUMBERS['prefix']}{next(NUMBERS['count'])}"  # type: ignore[call-overload]


def send_checked(client: Any, request: Request, url: str, name: str) -> None:
    """`client`: a FastHttpUser's; a wrong answer counts as a failure under `name`."""
    body = request.body
    if body is not None and request.numbered:
        body = body.replace(COUNTER_PLACEHOLDER, next_number())
    if request.headers:
        headers = request.header_dict()
    else:
        headers = JSON_HEADERS if body is not None else None
    with client.request(
        request.method,
        url,
        name=name,
        data=body,
        headers=headers,
        catch_response=True,
        # A redirect is the answer, checked like any other status, as verification checks it
        # (httpx does not follow either): following it would send load to an address no file
        # named, past the loopback-only rule (issue 53).
        allow_redirects=False,
    ) as response:
        problem = request.problem(response.status_code, response.content or b"")
        if problem is not None:
            response.failure(problem)
