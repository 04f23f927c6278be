"""A paired run's timetable fitted to the service (analysis/fit.py: compare's default, the
benchmark's --fit), on probes' fixed answers: a fast service and a slow one, an arm whose CPU is
not read, values set by hand kept (and said to be too small where they are), the settings a
scenario is then timed with, and what each mode's command line sets by hand."""

from dataclasses import replace
from types import ModuleType
from typing import Any

import pytest

from harness_tests.runner import run_in_process
from loadtest.analysis.fit import Level, Timetable, choose, timed, up
from loadtest.modes.compare.settings import CompareSettings


def levels(rps: list[float], busy: list[float | None], p99: list[float]) -> list[Level]:
    return [
        Level(users, *figures)
        for users, figures in zip(
            (1, 2, 4, 8, 16, 32), zip(rps, busy, p99, strict=True), strict=True
        )
    ]


# Like the lab's own apps: a request costs about a millisecond, so one user leaves the app idle
# between its round trips, and eight keep it busy.
FAST = {
    "v1": levels(
        [300, 520, 800, 900, 905, 900], [0.3, 0.55, 0.85, 0.97, 0.99, 0.99], [5, 6, 8, 12, 25, 50]
    ),
    "v2": levels(
        [450, 800, 1500, 1800, 1810, 1800],
        [0.25, 0.45, 0.8, 0.95, 0.98, 0.99],
        [3, 4, 5, 8, 15, 30],
    ),
}
# Like a real service: 40 and 50 ms of CPU a request; two users keep it busy.
SLOW = {
    "fast": levels(
        [22, 24.5, 25, 25, 25, 25], [0.88, 0.98, 1, 1, 1, 1], [48, 90, 170, 330, 650, 1300]
    ),
    "slow": levels(
        [18, 19.6, 20, 20, 20, 20], [0.9, 0.98, 1, 1, 1, 1], [60, 110, 210, 410, 810, 1600]
    ),
}


def test_a_fast_service_gets_the_users_that_keep_it_busy_and_short_windows() -> None:
    timetable = choose(FAST, {}, "READ")
    assert (timetable.users, timetable.settle_s, timetable.window_s) == (8, 0.2, 0.6)
    assert timetable.why[0] == (
        "users 8: the fewest keeping every arm busy (v1: 97% busy at 8; v2: 95% busy at 8)"
    )
    assert timetable.notes == ()


def test_a_slow_service_gets_few_users_and_windows_of_a_hundred_requests() -> None:
    timetable = choose(SLOW, {}, "BURN")
    assert timetable.users == 2
    # settle: the p99 at 2 users (110 ms), at least 0.2 s; window: 100 requests of the slowest
    # arm (19.6 r/s) after the settle, 0.2 + 5.102 s, rounded up to a tenth.
    assert (timetable.settle_s, timetable.window_s) == (0.2, 5.4)
    assert timetable.why[2].startswith(
        "window 5.4 s: 100 requests of the slowest arm, slow (19.6 r/s), after the settle"
    )


def test_a_long_tail_asks_for_a_longer_settle_and_ten_times_its_p99() -> None:
    tail = {arm: [replace(level, p99_ms=900.0) for level in found] for arm, found in SLOW.items()}
    timetable = choose(tail, {}, "BURN")
    assert (timetable.settle_s, timetable.window_s) == (0.9, 9.0)


def test_an_arm_whose_cpu_is_not_read_gets_users_where_its_throughput_levels_off() -> None:
    unread = {
        "fast": FAST["v2"],
        "remote": levels([100, 190, 300, 330, 335, 334], [None] * 6, [10, 11, 14, 25, 50, 99]),
    }
    timetable = choose(unread, {}, "READ")
    assert timetable.users == 8
    assert (
        "remote: its CPU is not read; 330 r/s at 8, within 5% of its best 335" in timetable.why[0]
    )


def test_an_arm_never_busy_says_something_else_limits_it() -> None:
    capped = {"v1": levels([100] * 6, [0.5, 0.6, 0.6, 0.6, 0.62, 0.61], [10] * 6)}
    timetable = choose(capped, {}, "READ")
    assert timetable.users == 16
    assert "never 90% busy (at most 62%, at 16): something else limits it" in timetable.why[0]


def test_values_set_by_hand_are_kept_and_said_to_be_too_small() -> None:
    timetable = choose(SLOW, {"users": 1, "window_s": 1.0, "settle_s": 0.05}, "BURN")
    assert (timetable.users, timetable.window_s, timetable.settle_s) == (1, 1.0, 0.05)
    assert timetable.why == ("users 1: as set", "settle 0.05 s: as set", "window 1 s: as set")
    users, settle, window = timetable.notes
    assert users.startswith("BURN: 1 users kept as set, but the probe kept every arm's CPUs 90% ")
    assert settle.startswith("BURN: settle_s 0.05 kept as set, under the p99 latency (60 ms)")
    assert window.startswith("BURN: window 1 s kept as set; it holds about 17 requests of slow")


def test_a_window_set_by_hand_bounds_a_fitted_settle_to_half_of_it() -> None:
    """The p99 (650 ms here) would ask for more settling than half the window set by hand: half
    the window, and a line saying why."""
    slow_tail = {
        arm: [replace(level, p99_ms=650.0) for level in found] for arm, found in SLOW.items()
    }
    timetable = choose(slow_tail, {"window_s": 0.6}, "BURN")
    assert (timetable.window_s, timetable.settle_s) == (0.6, 0.3)
    assert timetable.notes[0].startswith(
        "BURN: the p99 latency (650 ms) asks for a settle of 0.65 s, more than half the window "
        "set by hand (0.6 s): settling 0.3 s"
    )
    # The reason says what bounded it, not "at least the p99", which 0.3 s is not.
    assert timetable.why[1] == (
        "settle 0.3 s: half the window set by hand (the p99 latency, 650 ms, asked for 0.65 s)"
    )


def test_the_scenario_is_timed_with_its_timetable() -> None:
    settings = CompareSettings()
    assert timed(settings, None) is settings
    fitted = timed(settings, Timetable(2, 5.3, 0.2, ("why",)))
    assert (fitted.users, fitted.window_s, fitted.settle_s) == (2, 5.3, 0.2)
    assert up(5.21) == 5.3 and up(5.2) == 5.2 and up(0.11, 0.05) == 0.15


def settings_run_with(monkeypatch: pytest.MonkeyPatch, command: ModuleType, *argv: str) -> Any:
    """The settings a mode's `command.run` is handed for `argv`, nothing run."""
    seen = {}
    monkeypatch.setattr(command, "run", lambda settings, _: seen.setdefault("settings", settings))
    result = run_in_process(*argv)
    assert result.returncode == 0, result.stderr
    return seen["settings"]


@pytest.mark.parametrize(
    ("file", "arguments", "set_by_hand", "fit"),
    [
        ("burn.toml", [], (), True),
        ("burn.toml", ["--users", "3", "--window", "2"], ("users", "window_s"), True),
        ("burn.toml", ["--no-fit"], (), False),
        # The file sets all three (the benchmark's timetable): nothing is left to fit, no probe.
        ("lab.toml", [], ("users", "window_s", "settle_s"), False),
    ],
)
def test_the_command_line_says_what_was_set_by_hand(
    file: str,
    arguments: list[str],
    set_by_hand: tuple[str, ...],
    fit: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from loadtest.modes.compare import command

    settings = settings_run_with(monkeypatch, command, "compare", f"examples/{file}", *arguments)
    assert (settings.set_by_hand, settings.fit) == (set_by_hand, fit)


@pytest.mark.parametrize(
    ("arguments", "set_by_hand", "fit"),
    [
        ([], (), False),  # the benchmark's fixed timetable, as every published run
        (["--fit"], (), True),
        (["--fit", "--users", "3"], ("users",), True),
        (["--fit", "--window", "2", "--users", "10"], ("users", "window_s"), True),
    ],
)
def test_the_benchmark_fits_only_when_asked_and_keeps_what_was_set(
    arguments: list[str],
    set_by_hand: tuple[str, ...],
    fit: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from loadtest.modes.benchmark import command

    settings = settings_run_with(monkeypatch, command, *arguments)
    assert (settings.set_by_hand, settings.fit) == (set_by_hand, fit)
    # --users as given, or the default where it was not (no longer argparse's default).
    assert settings.users == (3 if "3" in arguments else 10)
