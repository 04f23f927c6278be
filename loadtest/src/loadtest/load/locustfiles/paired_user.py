"""The paired protocol's locust user, which every mode's users extend.

Under the harness (`--schedule FILE`), users follow the paired protocol's timetable: each
request goes to the arm whose window it starts in and is named after that window, so one
locust run measures every arm in alternating windows (see loadtest/load/schedule.py). In the
web UI (no schedule) they load the Host the UI names.

Checks are cheap on purpose (status, prefix, item count), so the load generator stays far
from being the bottleneck; the verification pass checks full response shapes before timing.
"""

import time
from argparse import ArgumentParser
from functools import cache
from pathlib import Path
from typing import Any

import gevent
from locust import FastHttpUser, constant, events, task
from locust.runners import WorkerRunner

from loadtest.load.scenarios import SCENARIOS
from loadtest.load.schedule import Schedule, request_name

POSTS_PER_LIST = SCENARIOS["read"].expected_posts or 0
LIST_PREFIX = b'{"posts":['
POST_MARKER = b'"is_published":'
IDLE_STEP_S = 0.05  # how often a user outside the schedule looks at the clock again


@events.init_command_line_parser.add_listener
def add_schedule_option(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--schedule",
        default="",
        include_in_web_ui=False,
        help="the paired protocol's timetable (JSON, written by the harness)",
    )


@events.init.add_listener
def leave_the_stats_file_to_the_master(environment: Any, **_kwargs: Any) -> None:
    """With --processes, forked workers inherit --json-file and write their own (empty) stats
    to it on exit, racing the master's; only the master may write it."""
    if isinstance(environment.runner, WorkerRunner) and environment.parsed_options:
        environment.parsed_options.json_file = None


@cache
def load_schedule(path: str) -> Schedule:
    return Schedule.read(Path(path))


def check_post_list(response: Any, posts: int = POSTS_PER_LIST) -> None:
    """`response`: locust's response context manager; `posts`: how many the list must hold."""
    if response.status_code != 200:
        response.failure(f"status {response.status_code}")
    elif not response.content.startswith(LIST_PREFIX):
        response.failure("body is not a post list")
    elif response.content.count(POST_MARKER) != posts:
        response.failure(f"expected {posts} posts")


def check_created(response: Any) -> None:
    if response.status_code != 201:
        response.failure(f"status {response.status_code}")
    elif b'"id":' not in response.content:
        response.failure("body has no id")


# One user class per scenario, and the runner picks classes by name, never with --tags:
# with several classes in the file, `--tags` made locust 2.47 burn about a third more CPU
# per request (measured: 600 vs 910 r/s from one core against the same endpoint). Every
# class has no think time, like `ab -c N` in the reference experiment.


class ScenarioUser(FastHttpUser):
    abstract = True
    wait_time = constant(0)
    scenario = ""

    def request_path(self) -> str:
        """Appended to the host (under the harness, the base URL of the window's arm)."""
        return SCENARIOS[self.scenario].path

    @task
    def run_scenario(self) -> None:
        path = self.request_path()
        options = self.environment.parsed_options
        schedule_path = getattr(options, "schedule", "") if options else ""
        if not schedule_path:
            self.send(path, path, arm=None)
            return
        schedule = load_schedule(schedule_path)
        moment = time.time()
        window = schedule.window_at(moment)
        if window is None:  # before the first window or after the last: wait, send nothing
            if moment < schedule.start:
                gevent.sleep(min(schedule.start - moment, IDLE_STEP_S * 10))
            else:
                gevent.sleep(IDLE_STEP_S)
            return
        self.send(schedule.hosts[window.arm] + path, request_name(window, moment), window.arm)

    def send(self, url: str, name: str, arm: str | None) -> None:
        raise NotImplementedError
