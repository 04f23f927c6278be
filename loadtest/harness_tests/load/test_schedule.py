"""The paired protocol's timetable: balanced, equal windows per arm, tagged by start time."""

import pytest

from loadtest.lab.arms import rotations
from loadtest.load.schedule import (
    MEASURED,
    SETTLE,
    WARMUP,
    Schedule,
    build_schedule,
    parse_request_name,
    request_name,
)

HOSTS = {"v1": "http://127.0.0.1:8001", "v2": "http://127.0.0.1:8002"}


def schedule_for(hosts=HOSTS, rounds: int = 4, warmup_s: float = 2.0) -> Schedule:
    return build_schedule(
        scenario="read",
        hosts=hosts,
        start=1000.0,
        rounds=rounds,
        window_s=1.0,
        settle_s=0.2,
        warmup_s=warmup_s,
    )


def test_two_arms_alternate_abba() -> None:
    assert rotations(("v1", "v2"), 4) == [["v1", "v2"], ["v2", "v1"], ["v1", "v2"], ["v2", "v1"]]
    order = [window.slot for window in schedule_for().measured()]
    assert order == ["v1", "v2", "v2", "v1", "v1", "v2", "v2", "v1"]


def test_three_arms_rotate_so_each_goes_first_and_last_equally() -> None:
    rounds = rotations(("a", "b", "c"), 6)
    assert rounds[:3] == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    for round_arms in rounds:
        assert sorted(round_arms) == ["a", "b", "c"]
    for position in range(3):
        assert sorted(round_arms[position] for round_arms in rounds) == [
            "a",
            "a",
            "b",
            "b",
            "c",
            "c",
        ]


def test_every_arm_gets_the_same_windows_back_to_back() -> None:
    hosts = {"v1": "h1", "v2": "h2", "v2-latest": "h3"}
    schedule = schedule_for(hosts, rounds=5)
    measured = schedule.measured()
    assert [sum(w.slot == arm for w in measured) for arm in hosts] == [5, 5, 5]
    assert {round(w.duration_s, 9) for w in measured} == {0.8}  # 1 s less 0.2 s settling
    for earlier, later in zip(schedule.windows, schedule.windows[1:], strict=False):
        assert later.start == earlier.end  # no gaps: the load never pauses
    for round_ in range(5):
        assert sorted(w.slot for w in measured if w.round == round_) == sorted(hosts)


def test_warm_up_windows_come_first_one_per_arm() -> None:
    schedule = schedule_for()
    warmups = [window for window in schedule.windows if window.kind == WARMUP]
    assert [(w.slot, w.start, w.end) for w in warmups] == [
        ("v1", 1000.0, 1002.0),
        ("v2", 1002.0, 1004.0),
    ]
    assert schedule.windows[2].kind == MEASURED and schedule.windows[2].start == 1004.0
    assert schedule.end == 1004.0 + 8 * 1.0


def test_requests_are_named_by_the_window_they_start_in() -> None:
    schedule = schedule_for()
    assert schedule.window_at(999.9) is None and schedule.window_at(schedule.end) is None
    first_measured = schedule.window_at(1004.1)
    assert first_measured is not None and first_measured.slot == "v1"
    assert request_name(first_measured, 1004.1) == "v1 | 2 | settle"
    assert request_name(first_measured, 1004.2) == "v1 | 2 | measured"
    assert request_name(schedule.window_at(1005.5), 1005.5) == "v2 | 3 | measured"
    assert request_name(schedule.window_at(1000.0), 1000.0) == "v1 | 0 | warmup"
    assert parse_request_name("v2-latest | 12 | settle") == ("v2-latest", 12, SETTLE)
    assert parse_request_name("/posts") is None
    assert parse_request_name("v1 | x | measured") is None


def test_schedule_round_trips_through_its_file() -> None:
    schedule = schedule_for()
    again = Schedule.from_json(schedule.to_json())
    assert again == schedule
    assert again.window_at(1005.5) == schedule.window_at(1005.5)


def test_settle_time_must_be_shorter_than_the_window() -> None:
    with pytest.raises(ValueError, match="shorter than the window"):
        build_schedule(
            scenario="read",
            hosts=HOSTS,
            start=0.0,
            rounds=1,
            window_s=0.2,
            settle_s=0.2,
            warmup_s=0.0,
        )
