"""The sweep's cells and timetable: which cells a run has, how many users and how long a window
each arm gets, and the schedule the locust users walk."""

from dataclasses import replace

import pytest

from loadtest.lab.errors import LabError
from loadtest.load.cell_timetable import (
    COUNTED_REQUESTS,
    MAX_COUNTED_S,
    MIN_USERS,
    build_sweep_schedule,
    cell_timing,
)
from loadtest.load.cells import cell_slot
from loadtest.load.schedule import MEASURED, WARMUP
from loadtest.load.slots import Slot
from loadtest.modes.sweep.cells import Cell, cell_request, plan_cells
from loadtest.modes.sweep.settings import SweepSettings

SETTINGS = SweepSettings(apps=("v1", "v2"), pairs=3)


def test_default_cells_are_every_shape_at_its_sizes() -> None:
    names = [cell.name for cell in plan_cells(SweepSettings())]
    assert names[:5] == ["flat-1", "flat-10", "flat-100", "flat-1000", "flat-5000"]
    assert "nested-5000" in names and "bulk-1000" in names and "validate-1000" in names
    assert "bulk-5000" not in names and len(names) == 18


def test_chosen_sizes_apply_where_a_shape_takes_them() -> None:
    settings = replace(SweepSettings(), sizes=(10, 5000), shapes=("nested", "validate"))
    assert [cell.name for cell in plan_cells(settings)] == [
        "nested-10",
        "nested-5000",
        "validate-10",
    ]
    with pytest.raises(LabError, match="leaves validate nothing"):
        plan_cells(replace(settings, sizes=(5000,)))


def test_fast_arms_get_many_users_and_the_shortest_window() -> None:
    timing = cell_timing(SETTINGS, {"v1": 0.001, "v2": 0.0005})
    assert timing.users == {"v1": SETTINGS.users, "v2": SETTINGS.users}
    floor = SETTINGS.window_s - SETTINGS.settle_s
    assert timing.counted_s == {"v1": floor, "v2": floor}


def test_slow_arms_get_few_users_and_a_window_for_enough_requests() -> None:
    timing = cell_timing(SETTINGS, {"v1": 0.2, "v2": 0.05, "v2-latest": 2.0})
    assert timing.users == {"v1": MIN_USERS, "v2": MIN_USERS, "v2-latest": MIN_USERS}
    assert timing.counted_s["v1"] == pytest.approx(COUNTED_REQUESTS * 0.2)
    assert timing.counted_s["v2"] == pytest.approx(COUNTED_REQUESTS * 0.05)
    assert timing.counted_s["v2-latest"] == MAX_COUNTED_S


def test_the_schedule_rotates_the_apps_and_settles_after_slow_windows() -> None:
    cells = [Cell("flat", 1), Cell("nested", 1000)]
    timings = {
        cells[0]: cell_timing(SETTINGS, {"v1": 0.001, "v2": 0.001}),
        cells[1]: cell_timing(SETTINGS, {"v1": 0.2, "v2": 0.05}),
    }
    hosts = {cell_slot(cell, app): f"http://{app}" for cell in cells for app in SETTINGS.apps}
    schedule = build_sweep_schedule(SETTINGS, cells, timings, hosts, start=100.0)
    warmups = [window for window in schedule.windows if window.kind == WARMUP]
    assert [window.slot for window in warmups] == ["v1/flat-1", "v2/flat-1"]
    measured = schedule.measured()
    assert len(measured) == SETTINGS.pairs * len(cells) * len(SETTINGS.apps)
    # Contiguous: each window starts where the one before ended.
    for before, after in zip(schedule.windows, schedule.windows[1:], strict=False):
        assert after.start == pytest.approx(before.end)
    # A group per cell and round; the apps' order rotates.
    groups: dict[int, list[str]] = {}
    for window in measured:
        groups.setdefault(window.round or 0, []).append(window.slot)
    assert groups[0] == ["v1/flat-1", "v2/flat-1"]
    assert groups[1] == ["v2/nested-1000", "v1/nested-1000"]
    assert groups[2] == ["v2/flat-1", "v1/flat-1"]
    assert {Slot.parse(slot).variant for slot in groups[3]} == {"nested-1000"}
    # After v1's nested window (2 users × 0.2 s), the next window settles for longer.
    after_slow = next(
        later
        for window, later in zip(measured, measured[1:], strict=False)
        if window.slot == "v1/nested-1000"
    )
    assert after_slow.measure_start - after_slow.start == pytest.approx(1.25 * 2 * 0.2)
    assert all(window.kind == MEASURED for window in measured)


@pytest.mark.parametrize(
    ("cell", "status", "content", "problem"),
    [
        (Cell("flat", 2), 200, b'{"posts":[{"is_published":1},{"is_published":1}]}', None),
        (Cell("flat", 2), 200, b'{"posts":[{"is_published":1}]}', "expected 2 posts"),
        (Cell("flat", 2), 500, b"oops", "status 500"),
        (Cell("bulk", 2), 201, b'{"ids":[1,2]}', None),
        (Cell("bulk", 2), 200, b'{"ids":[1,2]}', "status 200"),
        (Cell("validate", 3), 200, b'{"count":3}', None),
        (Cell("validate", 3), 200, b'{"count":2}', 'expected {"count":3}'),
        (Cell("nested", 1), 200, b'{"detail":[]}', 'the body does not start with {"posts":['),
    ],
)
def test_every_answer_gets_a_cheap_check(
    cell: Cell, status: int, content: bytes, problem: str | None
) -> None:
    assert cell_request(cell, 3).problem(status, content) == problem


def test_users_never_exceed_the_cap_even_below_the_minimum() -> None:
    one_user = SweepSettings(apps=("v1",), users=1)
    assert cell_timing(one_user, {"v1": 0.5}).users == {"v1": 1}
    assert cell_timing(one_user, {"v1": 0.0001}).users == {"v1": 1}
