"""The lab's arms started fresh (start_arms: every paired mode's session starts its arms so),
and one repeat of the paired protocol on them, as the benchmark and the versions mode run it:
fresh processes for the arms on a fresh dataset, each verified on every scenario, then each
scenario in one locust run of rotating rounds (pipeline/measure.py), the wrk cross-check where
asked, and each arm's memory before, during and after the load."""

import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path

from loadtest.analysis.fit import Timetable, timed
from loadtest.lab.apps import RunningApp, lab_service
from loadtest.lab.arms import ARMS, rotations
from loadtest.lab.database import LabDatabase
from loadtest.lab.dataset import load_dataset
from loadtest.lab.docker import start_container_app
from loadtest.lab.memory import PeakMemorySampler
from loadtest.lab.pinning import PinningPlan
from loadtest.lab.progress import ProgressDisplay
from loadtest.lab.services import start_service
from loadtest.load.paired import app_cpu_capacity
from loadtest.load.plan import PairedPlan
from loadtest.load.settings import PairedLoadSettings
from loadtest.load.verify import verify_scenario
from loadtest.load.windows import WindowRecord
from loadtest.pipeline.measure import QUIET_S, measure_scenario, read_memory_after_load
from loadtest.pipeline.records import ArmLife, ScenarioRun
from loadtest.pipeline.settings import BenchmarkSettings
from loadtest.pipeline.wrk import CROSS_CHECK_SCENARIOS, cross_check_scenario, wrk_round_seconds


def start_arm(
    settings: PairedLoadSettings,
    arm: str,
    database: LabDatabase,
    pinning: PinningPlan,
    log_dir: Path,
    environment: dict[str, str],
    *,
    docker: bool = False,
) -> RunningApp:
    """A fresh process of the arm (a fresh container with --docker), answering /health."""
    if docker:
        return start_container_app(
            arm, f"http://127.0.0.1:{settings.ports[arm]}", log_dir / f"{ARMS[arm].environment}.log"
        )
    # The arm as its plan declares it (a compare file declares the same: load/plan.py), or,
    # for a mode whose settings hold no plan, as the registry does.
    plan: PairedPlan | None = getattr(settings, "plan", None)
    if plan is not None and plan.services:
        service = plan.service(arm)
    else:
        service = lab_service(arm, settings.ports[arm], settings.workers)
    return start_service(
        service,
        log_path=log_dir / f"{service.what}.log",
        environment={**environment, "DATABASE_URL": database.url},
        cpus=pinning.app_cpus if pinning.enabled else None,
    )


def start_arms(
    stack: ExitStack,
    settings: PairedLoadSettings,
    arms: Sequence[str],
    database: LabDatabase,
    pinning: PinningPlan,
    log_dir: Path,
    environment: dict[str, str],
    *,
    docker: bool = False,
) -> dict[str, RunningApp]:
    """The arms started in the order given (start_arm), each stopped when `stack` closes."""
    apps: dict[str, RunningApp] = {}
    for arm in arms:
        apps[arm] = start_arm(settings, arm, database, pinning, log_dir, environment, docker=docker)
        stack.callback(apps[arm].stop)
    return apps


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
