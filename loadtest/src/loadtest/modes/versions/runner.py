"""A versions run: the lab's v2 app on each Pydantic 2 minor of the series. Every minor's
environment is found or built first (before the run's folder exists, so a pin uv cannot
satisfy is one line and nothing else); then fresh starts of every arm; then, step by step along
the series, the benchmark's repeat (pipeline/repeat.py) on three arms: v1, the minor before
and the minor (four for a --python step: both majors on both Pythons), so each step's cost is a
ratio measured in paired windows, not a quotient of two runs."""

from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.analysis.fit import declared_timetables
from loadtest.lab.arms import arm_named, derived_environment, interpreter_of
from loadtest.lab.errors import LabError
from loadtest.lab.interpreter import build_facts, describe
from loadtest.lab.startup import StartupSamples
from loadtest.load.calibration import CALIBRATION_S
from loadtest.modes.session import check_local_arms, open_session
from loadtest.modes.versions.generated import generated_seconds, measure_generated
from loadtest.modes.versions.results import build_versions_results
from loadtest.modes.versions.settings import VersionsSettings
from loadtest.pipeline.measure import planned_seconds as benchmark_seconds
from loadtest.pipeline.measure import startup_seconds
from loadtest.pipeline.records import ArmLife, ScenarioRun
from loadtest.pipeline.repeat import run_repeat

KIND = "versions"


def planned_seconds(settings: VersionsSettings) -> float:
    """Every step's load, as the benchmark plans one repeat of its arms (three, or four for a
    --python step), and the start-ups, the generated app and the calibration once."""
    steps = sum(
        benchmark_seconds(
            replace(settings.for_step(step), repeats=1, startup_samples=0, calibrate=False)
        )
        for step in settings.steps
    )
    calibration = CALIBRATION_S if settings.calibrate else 0.0
    return steps + startup_seconds(settings) + generated_seconds(settings) + calibration


def prepare_environments(settings: VersionsSettings, console: Console) -> dict[str, Any]:
    """Each derived arm's environment, from the cache or built now, said one line each (the
    first run's builds are timed apart from the measuring); a Python this machine lacks is one
    line before any is built, and an arm uv cannot install one line naming it. A --python
    arm's environment records its interpreter's build (pyenv's: no PGO, no LTO)."""
    derived = [arm for arm in settings.apps if arm_named(arm).derived]  # not the lab's arms
    for arm in derived:
        interpreter_of(arm_named(arm))
    environments: dict[str, Any] = {}
    for arm in derived:
        try:
            environment = derived_environment(arm)
        except LabError as error:
            raise LabError(f"{arm}: {error}") from None
        facts = environment.as_dict()
        sentence = environment.sentence()
        if arm_named(arm).python:
            facts["build"] = build_facts(environment.python)
            sentence = f"{describe(facts['build'])}; {sentence}"
        console.print(f"{arm}: {sentence}", highlight=False)
        environments[arm] = facts
    return environments


def run_versions(settings: VersionsSettings, console: Console) -> Path:
    """Build or find the environments, measure every step, write results/<ts>-versions/."""
    check_local_arms(settings, move_with="--ports-from PORT")
    environments = prepare_environments(settings, console)
    lives: list[ArmLife] = []
    runs: list[ScenarioRun] = []
    startup: dict[str, StartupSamples] = {}
    generated: dict[str, Any] | None = None
    calibration = None
    with open_session(KIND, settings.results_dir, console) as session:
        session.pin(settings.pin)
        database = session.start_database()
        session.print_database(settings, database)
        progress = session.show_progress(planned_seconds(settings))
        if settings.calibrate:
            calibration = session.calibrate(settings, session.run_dir / "calibration")
        if settings.startup_samples:
            startup = session.measure_startups(settings, database, progress)
        if settings.generated_models:
            progress.begin(
                f"a generated app of {settings.generated_models} models on every arm",
                generated_seconds(settings),
            )

            def on_sample() -> None:
                session.begin_measuring()
                progress.tick()

            generated = measure_generated(
                settings, session.pinning, session.run_dir, console, on_sample
            )
        for number, step in enumerate(settings.steps, 1):
            step_settings = settings.for_step(step)
            step_lives, step_runs, _ = run_repeat(
                step_settings,
                number,
                database,
                session.pinning,
                session.run_dir,
                progress,
                session.environment,
                # A scenario that declares its own (the related rows' slow pages) keeps it.
                declared_timetables(step_settings, step_settings.plan, settings.set_by_hand),
                on_arms_started=session.begin_measuring,
            )
            lives += step_lives
            runs += step_runs
    session.finish(
        build_versions_results(
            settings,
            lives=lives,
            runs=runs,
            calibration=calibration,
            startup=startup,
            generated=generated,
            database={"kind": database.kind, "server_version": database.server_version},
            pinning=session.pinning,
            environments=environments,
        )
    )
    return session.run_dir
