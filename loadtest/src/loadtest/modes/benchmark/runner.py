"""The benchmark run, the paired protocol: per repeat, every arm as a fresh process on the same
app CPUs, verified; then per scenario one locust run whose users alternate between the arms in
short windows (loadtest/load/schedule.py), with each arm's and PostgreSQL's CPU read at every
window's edges."""

from contextlib import ExitStack
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.analysis.fit import Timetable, declared_timetables, fit_scenario
from loadtest.lab.arms import DEFAULT_ARMS
from loadtest.lab.database import LabDatabase
from loadtest.lab.dataset import load_dataset
from loadtest.lab.docker import (
    container_interpreter,
    docker_pinning_note,
    ensure_docker_engine,
    start_docker_stack,
)
from loadtest.lab.pinning import PinningPlan, plan_pinning
from loadtest.lab.progress import ProgressDisplay
from loadtest.lab.startup import StartupSamples
from loadtest.load.scenarios import DEFAULT_SCENARIOS
from loadtest.load.verify import verify_scenario
from loadtest.load.windows import WindowRecord
from loadtest.modes.session import RunSession, check_local_arms, open_session
from loadtest.output.run_folder import link_latest
from loadtest.pipeline.measure import (
    planned_seconds,
    startup_seconds,
)
from loadtest.pipeline.records import ArmLife, ScenarioRun
from loadtest.pipeline.repeat import run_repeat, start_arms
from loadtest.pipeline.results import build_results
from loadtest.pipeline.settings import BenchmarkSettings
from loadtest.pipeline.wrk import (
    ensure_wrk,
)

KIND = "benchmark"


def run_benchmark(settings: BenchmarkSettings, console: Console) -> Path:
    """Run everything, write results/<timestamp>/, print the table; returns the run directory."""
    cross_check_tool = check_before_starting(settings)
    lives: list[ArmLife] = []
    runs: list[ScenarioRun] = []
    cross_check_windows: list[WindowRecord] = []
    calibration: dict[str, Any] | None = None
    startup: dict[str, StartupSamples] | None = None
    timetables: dict[str, Timetable] = {}  # --fit: each scenario's, fitted before the repeats
    with open_session(KIND, settings.results_dir, console) as session:
        run_dir = session.run_dir
        if settings.baseline is None:
            console.print(
                f"Note: only {', '.join(settings.apps)} runs, so there are no ratios (they need "
                "v1, the baseline, and another app).",
                highlight=False,
            )
        database = pin_and_start_database(settings, session)
        pinning = session.pinning  # as the database left it (an external one is not pinned)
        session.print_database(settings, database)
        progress = session.show_progress(planned_seconds(settings))
        if settings.calibrate:
            calibration = session.calibrate(settings, run_dir / "calibration")
        if startup_seconds(settings):
            startup = session.measure_startups(settings, database, progress)
        if settings.fit:
            timetables = fit_timetables(
                settings, database, pinning, run_dir, progress, session.environment
            )
        else:
            timetables = declared_timetables(settings, settings.plan, settings.set_by_hand)
        for repeat in range(1, settings.repeats + 1):
            repeat_lives, repeat_runs, repeat_cross_check = run_repeat(
                settings,
                repeat,
                database,
                pinning,
                run_dir,
                progress,
                session.environment,
                timetables,
                on_arms_started=session.begin_measuring,
            )
            lives += repeat_lives
            runs += repeat_runs
            cross_check_windows += repeat_cross_check

    session.finish(
        build_results(
            settings=settings,
            lives=lives,
            runs=runs,
            calibration=calibration,
            startup=startup,
            database={"kind": database.kind, "server_version": database.server_version},
            pinning=pinning,
            cross_check_windows=cross_check_windows,
            cross_check_tool=cross_check_tool,
            timetables=timetables or None,
        )
    )
    move_latest(settings, run_dir, console)
    return run_dir


def check_before_starting(settings: BenchmarkSettings) -> str | None:
    """What can be refused before anything is written or started: the Docker engine, or the
    local arms; and wrk for the cross-check (its version, or None without a cross-check)."""
    if settings.docker:
        ensure_docker_engine()
    else:
        check_local_arms(settings)
    return ensure_wrk() if settings.cross_check else None


def pin_and_start_database(settings: BenchmarkSettings, session: RunSession) -> LabDatabase:
    """The CPUs pinned and the database started: the compose stack's under --docker (its
    containers on the pinned terms), else the lab's own."""
    if not settings.docker:
        session.pin(settings.pin)
        return session.start_database()
    session.pin(settings.pin, note=docker_pinning_note(plan_pinning(settings.pin)))
    database = start_docker_stack(
        session.stack, settings.apps, settings.ports, session.pinning, session.run_dir
    )
    session.host["interpreter"] = container_interpreter(settings.apps[0])
    return database


def move_latest(settings: BenchmarkSettings, run_dir: Path, console: Console) -> None:
    """results/latest, once the run's results.json and reports are written: it points at the
    newest run of every default arm and scenario on the fixed timetable."""
    complete = set(DEFAULT_ARMS) <= set(settings.apps) and settings.scenarios == DEFAULT_SCENARIOS
    if complete and not settings.fit:
        link_latest(settings.results_dir, run_dir)
    else:
        console.print(
            "results/latest was not moved: it points at the newest run of every default arm "
            "and scenario on the fixed timetable, and this one "
            + ("fitted its own (--fit)." if complete else "ran fewer."),
            highlight=False,
        )


def fit_timetables(
    settings: BenchmarkSettings,
    database: LabDatabase,
    pinning: PinningPlan,
    run_dir: Path,
    progress: ProgressDisplay,
    environment: dict[str, str],
) -> dict[str, Timetable]:
    """--fit: every arm started on a fresh dataset, and each scenario probed on the arms that
    answer it correctly (analysis/fit.py), before the repeats and apart from them: no repeat's
    memory figures or database hold the probe's load, and every repeat is timed alike."""
    folder = run_dir / "runs" / "fit"
    folder.mkdir(parents=True, exist_ok=True)
    load_dataset(database.url, settings.dataset_size, related_rows=settings.plan.reads_related_rows)
    timetables: dict[str, Timetable] = {}
    with ExitStack() as stack:
        apps = start_arms(
            stack,
            settings,
            settings.apps,
            database,
            pinning,
            folder,
            environment,
            docker=settings.docker,
        )
        for name in settings.scenarios:
            scenario = settings.plan.scenario(name)
            verified = {
                arm: app
                for arm, app in apps.items()
                if not verify_scenario(app.base_url, scenario, database.url, arm)
            }
            if verified:  # an arm that fails here is flagged by the repeats' own verification
                timetables[name] = fit_scenario(
                    settings,
                    settings.plan,
                    name,
                    verified,
                    pinning,
                    folder,
                    progress,
                    database.server_pid,
                    settings.set_by_hand,
                )
    return timetables
