"""The payload sweep's locust user (`./test.sh sweep`): the paired protocol's user, whose arms
are (cell, app) pairs. A plan file (`--sweep-plan`, written by the harness) says per arm what
to send, how to check the answer, and how many users take part: users beyond that number idle
through the window."""

import itertools
import json
from argparse import ArgumentParser
from functools import cache
from pathlib import Path
from typing import Any

import gevent
from locust import events

from loadtest.load.locustfiles.paired_user import IDLE_STEP_S, ScenarioUser
from loadtest.modes.sweep.cells import CellRequest, quick_problem

USER_NUMBERS = itertools.count()


@events.init_command_line_parser.add_listener
def add_plan_option(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--sweep-plan",
        default="",
        include_in_web_ui=False,
        help="per arm of the sweep: its request, its check and its users (JSON, by the harness)",
    )


@cache
def load_plan(path: str) -> dict[str, tuple[CellRequest, int, int]]:
    """arm -> (request, size, users)"""
    plan = json.loads(Path(path).read_text())
    return {
        arm: (CellRequest(**entry["request"]), entry["size"], entry["users"])
        for arm, entry in plan.items()
    }


class SweepUser(ScenarioUser):
    scenario = "sweep"

    def on_start(self) -> None:
        self.number = next(USER_NUMBERS)

    def request_path(self) -> str:
        return ""

    def send(self, url: str, name: str, arm: str | None) -> None:
        options = self.environment.parsed_options
        plan_path = getattr(options, "sweep_plan", "") if options else ""
        if arm is None or not plan_path:
            raise RuntimeError("the sweep's user runs under the harness only (--sweep-plan)")
        request, size, users = load_plan(plan_path)[arm]
        if self.number >= users:
            gevent.sleep(IDLE_STEP_S)
            return
        headers = {"content-type": "application/json"} if request.body is not None else None
        with self.client.request(
            request.method,
            url + request.path,
            name=name,
            data=request.body,
            headers=headers,
            catch_response=True,
        ) as response:
            check(response, request, size)


def check(response: Any, request: CellRequest, size: int) -> None:
    problem = quick_problem(request, size, response.status_code, response.content or b"")
    if problem is not None:
        response.failure(problem)
