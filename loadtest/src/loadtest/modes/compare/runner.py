"""A compare run: the benchmark's paired protocol on the arms a file declares. Per repeat, every
arm the harness starts is a fresh process on the app CPUs (arms given by URL are asked for
their health path), every scenario is verified on every arm and the answers compared; then per
scenario one locust run alternates between the arms in short windows (the benchmark's own
measure_scenario), and the benchmark's results and table follow."""

import time
from contextlib import ExitStack
from pathlib import Path

from rich.console import Console

from loadtest.analysis.fit import Timetable, fit_scenario, timed
from loadtest.lab.arms import rotations
from loadtest.lab.database import LabDatabase, check_configured_url
from loadtest.lab.dataset import load_dataset
from loadtest.lab.docker import readable_container_pid
from loadtest.lab.errors import LabError
from loadtest.lab.memory import PeakMemorySampler, read_tree_memory
from loadtest.lab.pinning import PinningPlan, plan_pinning, process_cpus
from loadtest.lab.processes import ensure_port_free
from loadtest.lab.progress import ProgressDisplay
from loadtest.lab.services import RunningApp, Service, start_service, wait_for_health
from loadtest.lab.startup import StartupSamples, kill_now
from loadtest.load.scenarios import SCENARIOS
from loadtest.modes.compare.environments import with_derived_environments
from loadtest.modes.compare.file import caller_path
from loadtest.modes.compare.results import build_compare_results
from loadtest.modes.compare.settings import CompareSettings
from loadtest.modes.compare.stopping import Stopping
from loadtest.modes.compare.verify import Answer, ask, differing_fields
from loadtest.modes.session import RunSession, open_session
from loadtest.pipeline.measure import (
    QUIET_S,
    measure_scenario,
    planned_seconds,
    read_memory_after_load,
)
from loadtest.pipeline.records import ArmLife, ScenarioRun

KIND = "compare"
HEALTH_POLL_S = 0.01  # start-up samples: the figure's resolution
SECONDS_PER_START = 2.0  # for the progress line


def run_compare(settings: CompareSettings, console: Console) -> Path:
    """Verify, measure, write results/<timestamp>-compare/ and print the table."""
    check_before_starting(settings)
    settings = with_derived_environments(settings, console)
    began = time.monotonic()
    lives: list[ArmLife] = []
    runs: list[ScenarioRun] = []
    differences: dict[str, dict[str, list[str]]] = {}
    startup: dict[str, StartupSamples] = {}
    with open_session(KIND, settings.results_dir, console) as session:
        database = set_up_session(settings, session, console)
        progress = session.show_progress(planned_seconds(settings))
        calibration = (
            session.calibrate(settings, session.run_dir / "calibration")
            if (settings.calibrate)
            else None
        )
        if startup_count(settings):
            startup = measure_startups(settings, session, database, progress)
        stopping = Stopping(settings)
        timetables: dict[str, Timetable] = {}  # fitted in the first repeat
        repeat = 0
        while stopping.another_repeat(
            repeat, [w for run in runs for w in run.windows], time.monotonic() - began, progress
        ):
            repeat += 1
            repeat_lives, repeat_runs, repeat_differences = run_repeat(
                settings, repeat, session, database, progress, timetables, stopping
            )
            lives += repeat_lives
            runs += repeat_runs
            for name, found in repeat_differences.items():
                differences.setdefault(name, {}).update(found)
    session.finish(
        build_compare_results(
            settings=settings,
            lives=lives,
            runs=runs,
            calibration=calibration,
            startup=startup or None,
            database=(
                {"kind": database.kind, "server_version": database.server_version}
                if database is not None
                else None
            ),
            pinning=session.pinning,
            differences=differences,
            stopping=stopping,
            timetables=timetables,
        )
    )
    return session.run_dir


def check_before_starting(settings: CompareSettings) -> None:
    """What can be refused before anything starts: the database URL, busy ports, and an arm
    given only by its url that is not up (asked with its start_timeout_s, 5 s unless the file
    says: one line at once, not after the calibration and a minute's wait)."""
    if settings.dataset_size:
        check_configured_url()
    for service in settings.plan.services:
        if service.port is not None:
            ensure_port_free(service.port, f"arm {service.name}")
    for service in settings.plan.services:
        if not service.started_here:
            check_running(service, settings.arm_options[service.name].start_timeout_s)


def set_up_session(
    settings: CompareSettings, session: RunSession, console: Console
) -> LabDatabase | None:
    """The host facts, the pinning and the lab's PostgreSQL (when the file asks a dataset)."""
    # The arms here are the file's commands, on interpreters of their own: the build the host
    # facts name is the lab's (the harness and its load generator).
    lab_build = session.host["interpreter"]
    assert isinstance(lab_build, dict), "host facts name the lab's interpreter"
    session.host["interpreter"] = lab_build | {
        "where": "the lab's environments; each arm runs its own"
    }
    if settings.dataset_size:
        session.pin(settings.pin)  # the lab's PostgreSQL beside the load generator
    else:
        # No lab database: a service's own, if it has one, runs where its owner started it,
        # unpinned, and the pinning line does not claim it.
        planned = plan_pinning(settings.pin).without(
            "PostgreSQL", "a service's own database is not pinned"
        )
        session.pin(settings.pin, load_side=planned.load_side, note=planned.note)
    database = session.start_database() if settings.dataset_size else None
    if database is not None:
        console.print(
            f"PostgreSQL {database.server_version} ({database.kind}); "
            f"dataset: {settings.dataset_size:,} posts, its URL in each started arm's "
            "DATABASE_URL",
            highlight=False,
        )
    return database


def check_running(service: Service, timeout_s: float) -> None:
    url = service.base_url + service.health_path
    try:
        wait_for_health(url, lambda: True, timeout_s, service.what)
    except LabError as error:
        raise LabError(
            f"{error}: an arm given only by its url must be running before the run starts (or "
            "give the command that starts it)"
        ) from None


def measured_processes(settings: CompareSettings) -> list[Service]:
    """The arms whose process the harness starts and can read (not `docker run`'s client)."""
    return [service for service in settings.plan.services if settings.reads_process(service.name)]


def startup_count(settings: CompareSettings) -> int:
    return settings.startup_samples * len(measured_processes(settings))


def arm_environment(session: RunSession, database: LabDatabase | None) -> dict[str, str]:
    environment = dict(session.environment)
    if (path := caller_path()) is not None:
        environment["PATH"] = path  # the user's, not the bootstrap's (uv's python first)
    if database is not None:
        environment["DATABASE_URL"] = database.url
    return environment


def start_arm(
    settings: CompareSettings,
    service: Service,
    session: RunSession,
    database: LabDatabase | None,
    log_path: Path,
    poll_s: float = 0.2,
) -> RunningApp:
    """The arm, started (pinned to the app CPUs) or reached; its health path answers."""
    options = settings.arm_options[service.name]
    pinning: PinningPlan = session.pinning
    app = start_service(
        service,
        log_path=log_path,
        environment=arm_environment(session, database),
        cpus=pinning.app_cpus if pinning.enabled else None,
        timeout_s=options.start_timeout_s,
        poll_s=poll_s,
    )
    if not options.own_process:
        # Its process only launched the service (docker run): CPU and memory would be the
        # launcher's, so they are read from the container it names, where this machine can
        # read its processes, or not at all; stopping it still stops the launcher's group.
        app.process = None
        pid = readable_container_pid(options.container) if options.container else None
        app.container_pid = pid
        app.read_memory = (lambda: read_tree_memory(pid)) if pid is not None else (lambda: None)
    return app


def measure_startups(
    settings: CompareSettings,
    session: RunSession,
    database: LabDatabase | None,
    progress: ProgressDisplay,
) -> dict[str, StartupSamples]:
    """Fresh starts of every arm the harness starts, one at a time in rotating order, timed
    from launch to the first 200 on its health path, each killed at once."""
    services = {service.name: service for service in measured_processes(settings)}
    samples = {name: StartupSamples() for name in services}
    progress.begin(
        f"start-up · {settings.startup_samples} fresh start"
        f"{'s' if settings.startup_samples != 1 else ''} of each arm it starts",
        SECONDS_PER_START * startup_count(settings),
    )
    log_dir = session.run_dir / "startup"
    for number, order in enumerate(rotations(tuple(services), settings.startup_samples), 1):
        for name in order:
            app = start_arm(
                settings,
                services[name],
                session,
                database,
                log_dir / f"{name}.{number}.log",
                poll_s=HEALTH_POLL_S,
            )
            kill_now(app)
            assert app.started_s is not None
            samples[name].to_health_s.append(app.started_s)
            session.begin_measuring()
            progress.tick()
    return samples


def run_repeat(
    settings: CompareSettings,
    repeat: int,
    session: RunSession,
    database: LabDatabase | None,
    progress: ProgressDisplay,
    timetables: dict[str, Timetable],
    stopping: Stopping,
) -> tuple[list[ArmLife], list[ScenarioRun], dict[str, dict[str, list[str]]]]:
    """Fresh processes (and, with [database], a fresh dataset), verified and compared, then
    every scenario on the arms that passed; in the first repeat, each scenario's timetable
    fitted first (into `timetables`), unless --no-fit."""
    plan = settings.plan
    repeat_dir = session.run_dir / "runs" / f"{repeat:02d}"
    repeat_dir.mkdir(parents=True, exist_ok=True)
    order = tuple(rotations(plan.arms, repeat)[repeat - 1])
    lives = {arm: ArmLife(arm, repeat) for arm in order}
    runs: list[ScenarioRun] = []
    if database is not None:
        load_dataset(database.url, settings.dataset_size, related_rows=plan.reads_related_rows)
    with ExitStack() as stack:
        apps = start_arms(settings, order, session, database, repeat_dir, stack, lives)
        session.begin_measuring()
        time.sleep(QUIET_S)
        for arm, app in apps.items():
            lives[arm].idle = app.read_memory()
        differences = verify(settings, repeat, apps, lives, progress)
        samplers = {
            arm: stack.enter_context(PeakMemorySampler(app.read_memory))
            for arm, app in apps.items()
            if app.pid is not None
        }
        for scenario in plan.scenarios:
            verified = {arm: apps[arm] for arm in order if not lives[arm].problems[scenario.name]}
            if settings.fit and verified and scenario.name not in timetables:
                where = (session, database, repeat_dir, progress)
                fit_first(settings, scenario.name, verified, where, timetables, stopping)
            if verified:
                runs.append(
                    measure_scenario(
                        timed(settings, timetables.get(scenario.name)),
                        scenario.name,
                        repeat,
                        verified,
                        database,
                        session.pinning,
                        repeat_dir,
                        progress,
                        # Rows are counted in the lab's database, for the lab's own WRITEs.
                        count_rows=database is not None
                        and scenario.request
                        in (SCENARIOS["write"].request, SCENARIOS["async-write"].request),
                    )
                )
        read_memory_after_load(samplers, apps, lives)
    return list(lives.values()), runs, differences


def fit_first(
    settings: CompareSettings,
    scenario: str,
    apps: dict[str, RunningApp],
    place: tuple[RunSession, LabDatabase | None, Path, ProgressDisplay],
    timetables: dict[str, Timetable],
    stopping: Stopping,
) -> None:
    """The scenario's timetable fitted on the verified arms, before its first repeat is
    measured; the probe's time counted apart from the repeats' (`stopping.probing_s`).
    `place`: the session, the lab's database (or None), the repeat's folder, the progress."""
    session, database, repeat_dir, progress = place
    probe_began = time.monotonic()
    timetables[scenario] = fit_scenario(
        settings,
        settings.plan,
        scenario,
        apps,
        session.pinning,
        repeat_dir,
        progress,
        database.server_pid if database is not None else None,
        settings.set_by_hand,
    )
    stopping.probing_s += time.monotonic() - probe_began


def start_arms(
    settings: CompareSettings,
    order: tuple[str, ...],
    session: RunSession,
    database: LabDatabase | None,
    repeat_dir: Path,
    stack: ExitStack,
    lives: dict[str, ArmLife],
) -> dict[str, RunningApp]:
    """The arms started in `order`, each stopped when `stack` closes, its versions and CPUs
    noted in its life."""
    apps: dict[str, RunningApp] = {}
    for arm in order:
        service = settings.plan.service(arm)
        apps[arm] = start_arm(
            settings, service, session, database, repeat_dir / f"{service.what}.log"
        )
        stack.callback(apps[arm].stop)
        lives[arm].versions = apps[arm].versions
        lives[arm].cpus = process_cpus(apps[arm].pid)
    return apps


def verify(
    settings: CompareSettings,
    repeat: int,
    apps: dict[str, RunningApp],
    lives: dict[str, ArmLife],
    progress: ProgressDisplay,
) -> dict[str, dict[str, list[str]]]:
    """Every scenario on every arm, reads before writes (so no arm's read sees a write made
    here), then the answers side by side. Differences stop the run unless --allow-different;
    an arm that fails on its own is not timed in that scenario (its flags say why)."""
    plan = settings.plan
    reads_first = sorted(plan.scenarios, key=lambda scenario: scenario.request.method != "GET")
    found: dict[str, dict[str, list[str]]] = {}
    for scenario in reads_first:
        answers: dict[str, Answer] = {
            arm: ask(apps[arm].base_url, scenario, arm) for arm in plan.arms
        }
        for arm, answer in answers.items():
            lives[arm].problems[scenario.name] = answer.problems
            if answer.problems and repeat == 1:
                raise LabError(
                    f"{arm} fails {scenario.label} ({scenario.request.method} "
                    f"{scenario.path}): {answer.problems[0]}"
                )
            if answer.problems:  # a later repeat: that arm is not timed in it, and flagged
                progress.note(
                    f"repeat {repeat} · {arm}: {scenario.name} FAILED verification: "
                    f"{answer.problems[0]}"
                )
        differing = differing_fields(
            plan, scenario, answers, settings.file.normalisations if settings.file else ()
        )
        if differing and not settings.allow_different:
            arm, lines = next(iter(differing.items()))
            reference = next(name for name in plan.arms if not answers[name].problems)
            more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
            raise LabError(
                f"{scenario.label}: {arm}'s answer differs from {reference}'s at "
                f"{lines[0]}{more}; if the migration changed it on purpose, rerun with "
                "--allow-different (or name the field in the scenario's vary)"
            )
        if differing:
            found[scenario.name] = differing
    return found
