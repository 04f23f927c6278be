"""The paired protocol's locust user, the one every paired mode runs (`--schedule FILE --plan
FILE`, both written by the harness: load/paired.py).

Users follow the paired protocol's timetable: each request goes to the slot whose window it
starts in, is named after that window, and is the request the plan gives that slot, so one
locust run measures every slot in alternating windows (see loadtest/load/schedule.py). A slot
may take part with fewer users than the run has (the sweep's slow cells): the others idle
through its windows.

Checks are cheap on purpose (status, prefix, item count: load/plan.py), so the load generator
stays far from being the bottleneck; the verification pass checks whole answers before timing.
"""

import itertools
import time
from argparse import ArgumentParser
from functools import cache
from pathlib import Path
from typing import Any

import gevent
import locust.runners
from locust import FastHttpUser, constant, events, task
from locust.runners import WorkerRunner

from loadtest.load.locustfiles.checked import send_checked
from loadtest.load.plan import SlotLoad, read_slot_loads
from loadtest.load.schedule import Schedule, request_name

IDLE_STEP_S = 0.05  # how often a user outside the schedule (or its slot's users) looks again
# --load-processes: the master drops a worker after this many missed 1 s heartbeats (locust's
# default, 3, stopped a run whose workers a fully loaded machine starved for 3 s, and the run
# ended with no request recorded). A starved window is flagged by its own figures anyway.
locust.runners.HEARTBEAT_LIVENESS = 10
USER_NUMBERS = itertools.count()


@events.init_command_line_parser.add_listener
def add_options(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--schedule",
        default="",
        include_in_web_ui=False,
        help="the paired protocol's timetable (JSON, written by the harness)",
    )
    parser.add_argument(
        "--plan",
        default="",
        include_in_web_ui=False,
        help="per slot: its request, its check and its users (JSON, written by the harness)",
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


@cache
def load_plan(path: str) -> dict[str, SlotLoad]:
    return read_slot_loads(Path(path))


# One user class, and the runner picks it by name, never with --tags: with several classes in
# the file, `--tags` made locust 2.47 burn about a third more CPU per request (measured: 600 vs
# 910 r/s from one core against the same endpoint). No think time, like `ab -c N` in the
# reference experiment.


class PairedUser(FastHttpUser):
    wait_time = constant(0)

    def on_start(self) -> None:
        self.number = next(USER_NUMBERS)  # within this locust process

    @task
    def send_scheduled(self) -> None:
        options = self.environment.parsed_options
        schedule_path = getattr(options, "schedule", "") if options else ""
        plan_path = getattr(options, "plan", "") if options else ""
        if not schedule_path or not plan_path:
            raise RuntimeError("PairedUser runs under the harness only (--schedule and --plan)")
        schedule = load_schedule(schedule_path)
        moment = time.time()
        window = schedule.window_at(moment)
        if window is None:  # before the first window or after the last: wait, send nothing
            if moment < schedule.start:
                gevent.sleep(min(schedule.start - moment, IDLE_STEP_S * 10))
            else:
                gevent.sleep(IDLE_STEP_S)
            return
        load = load_plan(plan_path)[window.slot]
        if load.users is not None and self.number >= load.users:
            gevent.sleep(IDLE_STEP_S)
            return
        send_checked(
            self.client,
            load.request,
            schedule.hosts[window.slot] + load.request.path,
            request_name(window, moment),
        )
