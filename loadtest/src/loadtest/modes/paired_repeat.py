"""One repeat of the paired protocol on the lab's arms, as the benchmark and the versions mode
run it: fresh processes for the arms on a fresh dataset, each verified on every scenario, then
each scenario in one locust run of rotating rounds (pipeline/measure.py), the wrk cross-check
where asked, and each arm's memory before, during and after the load."""

import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from loadtest.analysis.fit import Timetable, timed
from loadtest.lab.apps import RunningApp
from loadtest.lab.arms import rotations
from loadtest.lab.database import LabDatabase
from loadtest.lab.dataset import load_dataset
from loadtest.lab.memory import PeakMemorySampler
from loadtest.lab.pinning import PinningPlan
from loadtest.lab.progress import ProgressDisplay
from loadtest.load.paired import app_cpu_capacity
from loadtest.load.verify import verify_scenario
from loadtest.load.windows import WindowRecord
from loadtest.modes.session import start_arms
from loadtest.pipeline.measure import QUIET_S, measure_scenario, read_memory_after_load
from loadtest.pipeline.records import ArmLife, ScenarioRun
from loadtest.pipeline.settings import BenchmarkSettings
from loadtest.pipeline.wrk import CROSS_CHECK_SCENARIOS, cross_check_scenario, wrk_round_seconds


def run_repeat(
    settings: BenchmarkSettings,
    repeat: int,
    database: LabDatabase,
    pinning: PinningPlan,
    run_dir: Path,
    progress: ProgressDisplay,
    environment: dict[str, str],
    timetables: dict[str, Timetable],
    on_arms_started: Callable[[], None] = lambda: None,
) -> tuple[list[ArmLife], list[ScenarioRun], list[WindowRecord]]:
    """Fresh processes for every arm on a fresh dataset, verified, then every scenario (and the
    wrk cross-check, when asked), each with its fitted timetable where --fit gave it one.
    `on_arms_started`: every arm answers /health, and its first figure (its idle memory) is
    next."""
    repeat_dir = run_dir / "runs" / f"{repeat:02d}"
    repeat_dir.mkdir(parents=True, exist_ok=True)
    order = tuple(rotations(settings.apps, repeat)[repeat - 1])
    lives = {arm: ArmLife(arm, repeat) for arm in order}
    runs: list[ScenarioRun] = []
    cross_check: list[WindowRecord] = []
    load_dataset(database.url, settings.dataset_size, related_rows=settings.plan.reads_related_rows)
    with ExitStack() as stack:
        apps = start_arms(
            stack,
            settings,
            order,
            database,
            pinning,
            repeat_dir,
            environment,
            docker=settings.docker,
        )
        for arm, app in apps.items():
            lives[arm].versions = app.versions
        on_arms_started()
        time.sleep(QUIET_S)
        for arm, app in apps.items():
            lives[arm].idle = app.read_memory()
            for name in settings.scenarios:
                problems = verify_scenario(
                    app.base_url, settings.plan.scenario(name), database.url, arm
                )
                lives[arm].problems[name] = problems
                if problems:
                    progress.note(
                        f"{settings.REPEAT_WORD} {repeat} · {arm}: {name} FAILED verification: "
                        f"{problems[0]}"
                    )
        samplers = {
            arm: stack.enter_context(PeakMemorySampler(app.read_memory))
            for arm, app in apps.items()
        }
        for name in settings.scenarios:
            verified = tuple(arm for arm in order if not lives[arm].problems[name])
            if verified:
                runs.append(
                    measure_scenario(
                        timed(settings, timetables.get(name)),
                        name,
                        repeat,
                        {arm: apps[arm] for arm in verified},
                        database,
                        pinning,
                        repeat_dir,
                        progress,
                    )
                )
        if settings.cross_check:
            cross_check = cross_check_repeat(
                settings, repeat, apps, lives, pinning, progress, timetables
            )
        read_memory_after_load(samplers, apps, lives)
    return list(lives.values()), runs, cross_check


def cross_check_repeat(
    settings: BenchmarkSettings,
    repeat: int,
    apps: dict[str, RunningApp],
    lives: dict[str, ArmLife],
    pinning: PinningPlan,
    progress: ProgressDisplay,
    timetables: dict[str, Timetable],
) -> list[WindowRecord]:
    """--cross-check: the scenarios wrk can load, again, on the arms that passed verification
    (with the scenario's fitted users and window, under --fit)."""
    records: list[WindowRecord] = []
    for name in (n for n in CROSS_CHECK_SCENARIOS if n in settings.scenarios):
        verified = {arm: app for arm, app in apps.items() if not lives[arm].problems[name]}
        if len(verified) < 2:
            continue
        scenario_settings = timed(settings, timetables.get(name))
        progress.begin(
            f"repeat {repeat}/{settings.repeats} · {name} · wrk cross-check",
            settings.pairs * wrk_round_seconds(scenario_settings, len(verified)),
        )
        records += cross_check_scenario(
            scenario_settings,
            name,
            repeat,
            verified,
            pinning.load_cpus if pinning.enabled else None,
            app_cpu_capacity(settings, pinning),
            on_window=progress.tick,
        )
    return records
