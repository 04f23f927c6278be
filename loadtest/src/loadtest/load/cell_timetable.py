"""The timetable of cells in paired windows (the sweep's and the shapes mode's): one locust run
walks every cell, round after round, each cell a group of one window per arm in a rotating
order (loadtest/load/schedule.py's windows and rounds).

Every arm's window in a cell is sized by how long its requests take (timed alone, before the
run, by verification):
- users: enough to keep a one-worker app busy while answers travel, at most `users`, and so few
  that a user's wait (users × one request's time) stays near LATENCY_TARGET_S: a slow arm's
  requests then drain quickly when its window ends. Never fewer than MIN_USERS (unless --users
  says fewer). At saturation the app's r/s does not depend on its users, so arms may differ;
- settle time: long enough for the previous window's requests to finish (its users × its
  request time, with a margin), so the counted span is the new arm's alone;
- counted span: long enough for COUNTED_REQUESTS requests of that arm (a window's r/s counts
  whole requests: with 12, one more or less moves it 8%), the window's floor otherwise, and
  at most MAX_COUNTED_S, where the slowest cells count fewer (and are flagged when too few).
  Each arm's span fits its own requests: a fast arm does not idle through a slow arm's span;
  ratios are of r/s and CPU per request, which do not depend on the span's length.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from loadtest.lab.arms import rotations
from loadtest.load.cells import NamedCell, cell_slot
from loadtest.load.schedule import MEASURED, WARMUP, Schedule, Window
from loadtest.load.settings import PairedLoadSettings

AnyCell = TypeVar("AnyCell", bound=NamedCell)

LATENCY_TARGET_S = 0.1
MIN_USERS = 2
COUNTED_REQUESTS = 12
MAX_COUNTED_S = 5.0
SETTLE_MARGIN = 1.25


def timetable_record(settings: PairedLoadSettings) -> dict[str, object]:
    """A cell run's timetable settings as results.json records them (the sweep's and the shapes
    mode's): floors and ceilings, each cell's own fitted within them."""
    return {
        "rounds": settings.pairs,
        "window_s_min": settings.window_s,
        "settle_s_min": settings.settle_s,
        "warmup_s_per_app": settings.warmup_s,
        "users_max": settings.users,
        "workers": settings.workers,
        "pin": settings.pin,
    }


@dataclass(frozen=True)
class CellTiming:
    seconds: dict[str, float]  # app -> one request's time, alone
    users: dict[str, int]  # app -> its users in the cell
    counted_s: dict[str, float]  # app -> its counted span


def arm_users(settings: PairedLoadSettings, seconds: float) -> int:
    fitting = math.floor(LATENCY_TARGET_S / max(seconds, 1e-6))
    # --users is a cap, even below MIN_USERS.
    return max(min(MIN_USERS, settings.users), min(settings.users, fitting))


def cell_timing(settings: PairedLoadSettings, seconds: dict[str, float]) -> CellTiming:
    floor = settings.window_s - settings.settle_s
    return CellTiming(
        seconds=dict(seconds),
        users={app: arm_users(settings, spent) for app, spent in seconds.items()},
        counted_s={
            app: min(MAX_COUNTED_S, max(floor, COUNTED_REQUESTS * spent))
            for app, spent in seconds.items()
        },
    )


def settle_after(settings: PairedLoadSettings, timing: CellTiming | None, app: str | None) -> float:
    """The settle time of a window that follows `app`'s window of a cell with `timing`."""
    if timing is None or app is None:
        return settings.settle_s
    return max(settings.settle_s, SETTLE_MARGIN * timing.users[app] * timing.seconds[app])


def build_sweep_schedule(
    settings: PairedLoadSettings,
    cells: Sequence[AnyCell],
    timings: Mapping[AnyCell, CellTiming],
    hosts: dict[str, str],  # slot -> its app's base URL
    start: float,
    scenario: str = "sweep",
) -> Schedule:
    """Warm-up windows (one per app, on the first cell), then `pairs` rounds; in each, every
    cell a group (its `round` in the schedule: round × cells + the cell's place), the apps'
    order rotating with the round and the cell."""
    apps = settings.apps
    orders = rotations(apps, len(apps))
    windows: list[Window] = []
    moment = start
    previous: tuple[CellTiming | None, str | None] = (None, None)
    for app in apps:
        slot = cell_slot(cells[0], app)
        windows.append(
            Window(len(windows), slot, WARMUP, None, moment, moment, moment + settings.warmup_s)
        )
        moment += settings.warmup_s
        previous = (timings[cells[0]], app)
    for round_ in range(settings.pairs):
        for place, cell in enumerate(cells):
            timing = timings[cell]
            for app in orders[(round_ + place) % len(orders)]:
                settle = settle_after(settings, *previous)
                end = moment + settle + timing.counted_s[app]
                group = round_ * len(cells) + place
                windows.append(
                    Window(
                        len(windows),
                        cell_slot(cell, app),
                        MEASURED,
                        group,
                        moment,
                        moment + settle,
                        end,
                    )
                )
                moment = end
                previous = (timing, app)
    return Schedule(scenario, dict(hosts), tuple(windows))
