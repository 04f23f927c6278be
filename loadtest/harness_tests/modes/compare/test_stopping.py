"""When a compare run stops adding repeats (modes/compare/stopping.py), on recorded windows: a
steady pilot is enough; a pilot whose repeats disagree asks for more; the budget ends a run
short and says which ratios it left wide; no target, or a pilot too small to plan from, runs
the pilot only. Then compare's options for it, read in-process."""

import io
from dataclasses import replace

from rich.console import Console

from harness_tests.factories import make_run
from harness_tests.runner import REPOSITORY_ROOT, run_in_process
from loadtest.lab.progress import ProgressDisplay
from loadtest.load.windows import WindowRecord
from loadtest.modes.compare.file import read_compare_file
from loadtest.modes.compare.settings import CompareSettings
from loadtest.modes.compare.stopping import Stopping
from loadtest.pipeline.records import ScenarioRun

BURN = read_compare_file(REPOSITORY_ROOT / "examples" / "burn.toml", allow_remote=False)
SETTINGS = CompareSettings(file=BURN, apps=BURN.plan.arms, scenarios=("burn",))
RATIO = ("burn", "slow", "fast")


def progress() -> tuple[ProgressDisplay, io.StringIO]:
    output = io.StringIO()
    return ProgressDisplay(0, Console(file=output, width=200)), output


def pilot(ratios: list[float]) -> list[ScenarioRun]:
    """One repeat a ratio: each repeat's 8 rounds all at that ratio of slow's r/s over fast's,
    in alternating order."""
    return [
        make_run(
            "burn",
            [
                {"fast": 100.0, "slow": 100.0 * ratio}
                if round_ % 2 == 0
                else {"slow": 100.0 * ratio, "fast": 100.0}
                for round_ in range(8)
            ],
            repeat=number,
        )
        for number, ratio in enumerate(ratios, 1)
    ]


def windows_of(runs: list[ScenarioRun]) -> list[WindowRecord]:
    return [window for run in runs for window in run.windows]


def repeats_run(stopping: Stopping, runs: list[ScenarioRun], seconds_each: float) -> int:
    """Repeats run as compare runs them, each taking `seconds_each`; a repeat past the pilot
    repeats the pilot's first ratio."""
    display, _ = progress()
    done = 0
    while stopping.another_repeat(done, windows_of(runs[:done]), done * seconds_each, display):
        done += 1
        if done > len(runs):
            runs.append(
                replace(
                    runs[0],
                    repeat=done,
                    windows=[replace(window, repeat=done) for window in runs[0].windows],
                )
            )
    return done


def test_a_steady_pilot_is_enough() -> None:
    stopping = Stopping(SETTINGS)
    assert repeats_run(stopping, pilot([2.0, 2.02, 1.98, 2.01, 1.99]), 10.0) == 5
    assert stopping.stopped == "precision"
    assert stopping.ratio_stopped(RATIO) == "precision"
    # A ratio whose arm failed verification in a repeat had pairs in fewer than were run.
    assert stopping.ratio_stopped(RATIO, repeats_with_pairs=4) == "budget"
    assert stopping.as_dict() == {
        "precision": 0.05,
        "budget_s": 600.0,
        "pilot_repeats": 5,
        "repeats": 5,
        "repeats_needed": 5,
        "pilot_over_budget_s": None,
        "stopped": "precision",
    }


def test_a_pilot_whose_repeats_disagree_asks_for_more_and_gets_them() -> None:
    stopping = Stopping(SETTINGS)
    runs = pilot([2.0, 2.3, 1.8, 2.2, 1.9])
    done = repeats_run(stopping, runs, 10.0)
    needed = stopping.needed[RATIO]
    assert done == needed > 5
    assert stopping.stopped == "precision"
    assert stopping.ratio_stopped(RATIO) == "precision"


def test_the_budget_ends_a_run_short_and_says_so() -> None:
    stopping = Stopping(replace(SETTINGS, budget_s=75.0))
    display, output = progress()
    runs = pilot([2.0, 2.3, 1.8, 2.2, 1.9])
    for done in range(5):
        assert stopping.another_repeat(done, windows_of(runs[:done]), done * 10.0, display)
    # 50 s for the pilot: a sixth repeat ends by 60 s, a seventh by 70 s, an eighth would not.
    assert stopping.another_repeat(5, windows_of(runs), 50.0, display)
    assert stopping.another_repeat(6, windows_of(runs), 60.0, display)
    assert stopping.another_repeat(7, windows_of(runs), 70.0, display) is False
    assert stopping.stopped == "budget"
    assert stopping.ratio_stopped(RATIO) == "budget"
    text = output.getvalue()
    assert "pilot of 5 repeats: the widest ratio needs" in text
    assert "stopping at 7 repeats: another (about 10 s) would pass the budget of 1.25 min" in text


def test_a_pilot_past_the_budget_runs_whole_and_says_so_after_its_first_repeat() -> None:
    """A slow service's pilot may not fit: its repeats are all run (the interval over repeats
    needs them), the run says so at once, and adds none. The first repeat's probes are not
    counted as a repeat's time."""
    stopping = Stopping(replace(SETTINGS, budget_s=60.0))
    stopping.probing_s = 30.0
    display, output = progress()
    runs = pilot([2.0, 2.3, 1.8, 2.2, 1.9])
    assert stopping.another_repeat(0, [], 0.0, display)
    # The first repeat took 45 s, 30 of them probing: 15 s a repeat, 45 + 4 x 15 = 105 s.
    assert stopping.another_repeat(1, windows_of(runs[:1]), 45.0, display)
    assert stopping.pilot_over_budget_s == 105.0
    assert "the pilot of 5 repeats will take about 2 min, past the budget of 1 min" in (
        output.getvalue()
    )
    for done in (2, 3, 4):
        assert stopping.another_repeat(
            done, windows_of(runs[:done]), 45.0 + 15 * (done - 1), display
        )
    assert stopping.another_repeat(5, windows_of(runs), 105.0, display) is False
    assert stopping.stopped == "budget" and stopping.as_dict()["pilot_over_budget_s"] == 105


def test_a_pilot_with_no_ratio_to_plan_from_stops_as_fixed() -> None:
    """Every repeat without pairs (an arm that failed verification in all of them): nothing to
    plan, the pilot only."""
    stopping = Stopping(SETTINGS)
    display, _ = progress()
    empty = [replace(run, windows=[]) for run in pilot([2.0] * 5)]
    for done in range(5):
        assert stopping.another_repeat(done, windows_of(empty[:done]), done * 10.0, display)
    assert stopping.another_repeat(5, windows_of(empty), 50.0, display) is False
    assert stopping.stopped == "fixed" and stopping.needed == {}


def test_no_target_or_a_small_pilot_runs_the_pilot_only() -> None:
    for settings in (replace(SETTINGS, precision=0.0), replace(SETTINGS, repeats=2)):
        stopping = Stopping(settings)
        runs = pilot([2.0, 2.3, 1.8, 2.2, 1.9][: settings.repeats])
        assert repeats_run(stopping, runs, 10.0) == settings.repeats
        assert stopping.stopped == "fixed"
        assert stopping.ratio_stopped(RATIO) == "fixed"


def test_precision_and_budget_options_and_their_one_line_errors() -> None:
    for arguments, message in (
        (["--precision", "0.7"], "0.7 must be between 0 and 0.5 (a fraction: 0.05 is ±5%)"),
        (["--precision", "five"], "'five' is not a number (a fraction: 0.05 is ±5%)"),
        (["--budget", "0"], "0 must be between 1 and 1440 minutes"),
    ):
        result = run_in_process("compare", "examples/burn.toml", *arguments)
        assert result.returncode == 2, result.stderr
        assert message in result.stderr
        assert "Traceback" not in result.stderr
