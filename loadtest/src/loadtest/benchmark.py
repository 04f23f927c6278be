"""The benchmark run, the paired protocol: per repeat, every arm as a fresh process on the same
app CPUs, verified; then per scenario one locust run whose users alternate between the arms in
short windows (schedule.py), with each arm's and PostgreSQL's CPU read at every window's edges."""

import math
import os
import time
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.apps import RunningApp, start_app
from loadtest.calibration import calibrate_load_generator
from loadtest.cpu import TreeCpu, busy_seconds, cpu_seconds_between, read_tree_cpu
from loadtest.cross_check import (
    CROSS_CHECK_SCENARIOS,
    cross_check_scenario,
    cross_check_seconds,
    ensure_wrk,
)
from loadtest.database import BenchmarkDatabase, check_configured_url, provide_database
from loadtest.dataset import count_posts_titled, load_dataset
from loadtest.docker_stack import ensure_docker_engine, start_container_app, start_docker_stack
from loadtest.host import host_facts
from loadtest.html_report import write_html_report
from loadtest.locust_runs import (
    LOCUSTFILE,
    STOP_TIMEOUT_S,
    LocustRun,
    locust_command,
    run_locust,
)
from loadtest.memory import MemoryReading, PeakMemorySampler
from loadtest.pinning import PinningPlan, pin_process_tree, plan_pinning
from loadtest.processes import BenchmarkError, ensure_port_free
from loadtest.progress import ProgressDisplay
from loadtest.report import print_table, write_report
from loadtest.results import build_results, create_run_dir, link_latest, write_results
from loadtest.scenarios import SCENARIO_NAMES, SCENARIOS, write_title
from loadtest.schedule import WARMUP, Schedule, build_schedule
from loadtest.settings import APP_NAMES, ARMS, BenchmarkSettings
from loadtest.startup import SECONDS_PER_SAMPLE, StartupSamples, measure_startup
from loadtest.verify import verify_scenario
from loadtest.windows import (
    WindowCpu,
    WindowRecord,
    build_window_records,
    per_arm,
    tally_by_name,
)

QUIET_S = 1.0  # let the apps go quiet before idle/after memory readings
SCENARIO_USER_CLASS = {"read": "ReadUser", "synthetic": "SyntheticUser", "write": "WriteUser"}
# Locust's start-up (imports, spawning users) before the schedule's first window; a late start
# only shortens the first warm-up window.
LOCUST_START_S = 3.0
LOCUST_START_PER_EXTRA_PROCESS_S = 1.0
# With --processes, the master holds a window's requests only once a worker has reported them
# (every 3 s, and once more on quitting): locust runs this long past the last window.
LOCUST_TAIL_S = 1.0
LOCUST_TAIL_DISTRIBUTED_S = 4.0
CALIBRATION_S = 8.0


@dataclass
class ArmLife:
    """One arm's process in one repeat: versions, memory and verification."""

    arm: str
    repeat: int  # 1-based
    versions: dict[str, Any] = field(default_factory=dict)
    idle: MemoryReading | None = None
    peak: MemoryReading | None = None
    after: MemoryReading | None = None
    problems: dict[str, list[str]] = field(default_factory=dict)  # verification, per scenario


@dataclass
class ScenarioRun:
    """One locust run: one scenario in one repeat, every verified arm in alternating windows."""

    repeat: int  # 1-based
    scenario: str
    arms: tuple[str, ...]
    windows: list[WindowRecord]
    locust: LocustRun
    acknowledged: dict[str, int]  # successful requests per arm, warm-up and settle included
    failures: dict[str, int] = field(default_factory=dict)  # per arm, every phase
    warmup_requests: dict[str, int] = field(default_factory=dict)  # per arm: 0 = started late
    new_rows: dict[str, int] = field(default_factory=dict)  # write: rows each arm stored


def arm_order(apps: tuple[str, ...], repeat: int) -> tuple[str, ...]:
    """The order arms start in and take the first window, rotated per repeat (0-based)."""
    return tuple(apps[(position + repeat) % len(apps)] for position in range(len(apps)))


def planned_seconds(settings: BenchmarkSettings) -> float:
    per_scenario = len(settings.apps) * (settings.warmup_s + settings.pairs * settings.window_s)
    load = settings.repeats * len(settings.scenarios) * (per_scenario + locust_start_s(settings))
    if settings.cross_check:
        load += sum(cross_check_seconds(settings, name) for name in CROSS_CHECK_SCENARIOS)
    return load + (CALIBRATION_S if settings.calibrate else 0) + startup_seconds(settings)


def startup_seconds(settings: BenchmarkSettings) -> float:
    if settings.docker:
        return 0.0
    return SECONDS_PER_SAMPLE * settings.startup_samples * len(settings.apps)


def locust_start_s(settings: BenchmarkSettings) -> float:
    workers = settings.load_processes if settings.load_processes > 1 else 0
    return LOCUST_START_S + LOCUST_START_PER_EXTRA_PROCESS_S * workers


def locust_tail_s(settings: BenchmarkSettings) -> float:
    return LOCUST_TAIL_DISTRIBUTED_S if settings.load_processes > 1 else LOCUST_TAIL_S


def run_benchmark(settings: BenchmarkSettings, console: Console) -> Path:
    """Run everything, write results/<timestamp>/, print the table; returns the run directory."""
    if settings.docker:
        ensure_docker_engine()  # before anything is written or started
    if not settings.docker:
        check_configured_url()
    cross_check_tool = ensure_wrk() if settings.cross_check else None
    if not settings.docker:
        for app_name in settings.apps:  # now, not minutes later
            ensure_port_free(settings.ports[app_name], ARMS[app_name].project)
    started_at = datetime.now(UTC)
    run_dir = create_run_dir(settings.results_dir, started_at)
    host = host_facts()  # before pinning narrows what this process sees
    pinning = plan_pinning(settings.pin and not settings.docker)
    if settings.docker:
        pinning = replace(pinning, note="not pinned: the apps run in containers with the same "
                          "CPU and memory limits (docker-compose.yml)")  # fmt: skip
    if pinning.enabled:
        os.sched_setaffinity(0, pinning.load_cpus)  # the runner's children inherit this
    console.print(f"Results go to {run_dir}", highlight=False)
    if settings.baseline is None:
        console.print(f"Note: only {', '.join(settings.apps)} runs, so there are no ratios (they "
                      "need v1, the baseline, and another app).", highlight=False)  # fmt: skip
    console.print(f"Pinning: {pinning.note}", highlight=False)

    lives: list[ArmLife] = []
    runs: list[ScenarioRun] = []
    cross_check_windows: list[WindowRecord] = []
    calibration: dict[str, Any] | None = None
    startup: dict[str, StartupSamples] | None = None
    environment = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    with ExitStack() as stack:
        database = (
            start_docker_stack(stack, settings) if settings.docker else provide_database(stack)
        )
        if database.server_pid and pinning.enabled:
            pin_process_tree(database.server_pid, pinning.load_cpus)
        elif pinning.enabled:
            note = pinning.note.replace(", PostgreSQL", "")
            pinning = replace(pinning, note=f"{note} (the external PostgreSQL is not pinned)")
            console.print(f"Pinning, corrected: {pinning.note}", highlight=False)
        console.print(
            f"PostgreSQL {database.server_version} ({database.kind}); "
            f"dataset: {settings.dataset_size:,} posts",
            highlight=False,
        )
        with ProgressDisplay(planned_seconds(settings), console) as progress:
            if settings.calibrate:
                calibration = calibrate_load_generator(
                    settings, pinning, run_dir / "calibration", progress, CALIBRATION_S,
                    environment,
                )  # fmt: skip
            if startup_seconds(settings):
                progress.begin(f"start-up · {settings.startup_samples} fresh starts per app",
                               startup_seconds(settings))  # fmt: skip
                startup = measure_startup(
                    settings, database.url, pinning.app_cpus if pinning.enabled else None,
                    run_dir / "startup", environment, on_sample=progress.tick,
                )  # fmt: skip
            for repeat in range(1, settings.repeats + 1):
                repeat_lives, repeat_runs, repeat_cross_check = run_repeat(
                    settings, repeat, database, pinning, run_dir, progress, environment
                )
                lives += repeat_lives
                runs += repeat_runs
                cross_check_windows += repeat_cross_check

    finished_at = datetime.now(UTC)
    results = build_results(
        settings=settings,
        lives=lives,
        runs=runs,
        calibration=calibration,
        startup=startup,
        host=host,
        database={"kind": database.kind, "server_version": database.server_version},
        pinning=pinning,
        started_at=started_at,
        finished_at=finished_at,
        cross_check_windows=cross_check_windows,
        cross_check_tool=cross_check_tool,
    )
    write_results(run_dir, results)
    write_report(run_dir, results)
    write_html_report(run_dir, results)
    complete = settings.apps == APP_NAMES and settings.scenarios == SCENARIO_NAMES
    if complete:
        link_latest(settings.results_dir, run_dir)
    print_table(results, console)
    console.print(f"\nWrote {run_dir}/results.json, report.md and report.html", highlight=False)
    if not complete:
        console.print("results/latest was not moved: it points at the newest run of every app "
                      "and scenario, and this one ran fewer.", highlight=False)  # fmt: skip
    return run_dir


def run_repeat(
    settings: BenchmarkSettings,
    repeat: int,
    database: BenchmarkDatabase,
    pinning: PinningPlan,
    run_dir: Path,
    progress: ProgressDisplay,
    environment: dict[str, str],
) -> tuple[list[ArmLife], list[ScenarioRun], list[WindowRecord]]:
    """Fresh processes for every arm on a fresh dataset, verified, then every scenario (and the
    wrk cross-check, when asked)."""
    repeat_dir = run_dir / "runs" / f"{repeat:02d}"
    order = arm_order(settings.apps, repeat - 1)
    lives = {arm: ArmLife(arm, repeat) for arm in order}
    runs: list[ScenarioRun] = []
    cross_check: list[WindowRecord] = []
    load_dataset(database.url, settings.dataset_size)
    with ExitStack() as stack:
        apps: dict[str, RunningApp] = {}
        for arm in order:
            apps[arm] = start_arm(settings, arm, database, pinning, repeat_dir, environment)
            stack.callback(apps[arm].stop)
            lives[arm].versions = apps[arm].versions
        time.sleep(QUIET_S)
        for arm, app in apps.items():
            lives[arm].idle = app.read_memory()
            for name in settings.scenarios:
                problems = verify_scenario(app.base_url, SCENARIOS[name], database.url, arm)
                lives[arm].problems[name] = problems
                if problems:
                    progress.note(f"repeat {repeat} · {ARMS[arm].project}: {name} FAILED "
                                  f"verification: {problems[0]}")  # fmt: skip
        samplers = {arm: stack.enter_context(PeakMemorySampler(app.read_memory))
                    for arm, app in apps.items()}  # fmt: skip
        for name in settings.scenarios:
            verified = tuple(arm for arm in order if not lives[arm].problems[name])
            if verified:
                runs.append(
                    measure_scenario(
                        settings,
                        name,
                        repeat,
                        {arm: apps[arm] for arm in verified},
                        database,
                        pinning,
                        repeat_dir,
                        progress,
                    )  # fmt: skip
                )
        if settings.cross_check:
            cross_check = cross_check_repeat(settings, repeat, apps, lives, pinning, progress)
        for arm, sampler in samplers.items():
            sampler.stop()
            if sampler.samples:
                lives[arm].peak = MemoryReading(sampler.peak_rss_mib, sampler.peak_uss_mib)
        time.sleep(QUIET_S)
        for arm, app in apps.items():
            lives[arm].after = app.read_memory()
    return list(lives.values()), runs, cross_check


def cross_check_repeat(
    settings: BenchmarkSettings,
    repeat: int,
    apps: dict[str, RunningApp],
    lives: dict[str, ArmLife],
    pinning: PinningPlan,
    progress: ProgressDisplay,
) -> list[WindowRecord]:
    """--cross-check: the scenarios wrk can load, again, on the arms that passed verification."""
    records: list[WindowRecord] = []
    for name in (n for n in CROSS_CHECK_SCENARIOS if n in settings.scenarios):
        verified = {arm: app for arm, app in apps.items() if not lives[arm].problems[name]}
        if len(verified) < 2:
            continue
        progress.begin(f"repeat {repeat}/{settings.repeats} · {name} · wrk cross-check",
                       cross_check_seconds(settings, name, len(verified)))  # fmt: skip
        records += cross_check_scenario(
            settings, name, repeat, verified, pinning.load_cpus if pinning.enabled else None,
            app_cpu_capacity(settings, pinning), on_window=progress.tick,
        )  # fmt: skip
    return records


def start_arm(
    settings: BenchmarkSettings,
    arm: str,
    database: BenchmarkDatabase,
    pinning: PinningPlan,
    repeat_dir: Path,
    environment: dict[str, str],
) -> RunningApp:
    if settings.docker:
        return start_container_app(arm, f"http://127.0.0.1:{settings.ports[arm]}")
    return start_app(
        arm,
        port=settings.ports[arm],
        workers=settings.workers,
        database_url=database.url,
        cpus=pinning.app_cpus if pinning.enabled else None,
        log_path=repeat_dir / f"{ARMS[arm].project}.log",
        environment=environment,
    )


def app_cpu_capacity(settings: BenchmarkSettings, pinning: PinningPlan) -> float:
    """CPUs an app can keep busy: its pinned CPUs, but one per uvicorn worker at most."""
    return float(min(len(pinning.app_cpus), settings.workers)) or 1.0


def measure_scenario(
    settings: BenchmarkSettings,
    name: str,
    repeat: int,
    apps: dict[str, RunningApp],
    database: BenchmarkDatabase,
    pinning: PinningPlan,
    repeat_dir: Path,
    progress: ProgressDisplay,
) -> ScenarioRun:
    launched = time.time()
    schedule = build_schedule(
        scenario=name,
        hosts={arm: app.base_url for arm, app in apps.items()},
        start=launched + locust_start_s(settings),
        rounds=settings.pairs,
        window_s=settings.window_s,
        settle_s=settings.settle_s,
        warmup_s=settings.warmup_s,
    )
    schedule_path = repeat_dir / f"{name}.schedule.json"
    schedule_path.write_text(schedule.to_json())
    prefix = repeat_dir / name
    titles = [write_title(arm) for arm in apps]
    rows_before = count_posts_titled(database.url, titles) if name == "write" else {}
    duration_s = math.ceil(schedule.end - launched + locust_tail_s(settings))
    progress.begin(f"repeat {repeat}/{settings.repeats} · {name} · "
                   f"{' / '.join(apps)} in {settings.pairs} rounds", duration_s)  # fmt: skip
    locust, cpu = run_paired_locust(
        settings, schedule, schedule_path, apps, pinning, prefix, progress,
        duration_s=duration_s, user_class=SCENARIO_USER_CLASS[name],
        database_pid=database.server_pid, during=f"the {name} scenario",
    )  # fmt: skip
    tallies = tally_by_name(locust.entries)
    warmup_requests = per_arm(tallies, "requests", WARMUP)
    run = ScenarioRun(
        repeat=repeat,
        scenario=name,
        arms=tuple(apps),
        windows=build_window_records(
            schedule=schedule,
            tallies=tallies,
            cpu=cpu,
            repeat=repeat,
            app_cpu_capacity=app_cpu_capacity(settings, pinning),
        ),
        locust=locust,
        acknowledged=per_arm(tallies, "successes"),
        failures=per_arm(tallies, "failures"),
        warmup_requests={arm: warmup_requests.get(arm, 0) for arm in apps},
    )
    if name == "write":
        rows_after = count_posts_titled(database.url, titles)
        run.new_rows = {
            arm: rows_after[write_title(arm)] - rows_before[write_title(arm)] for arm in apps
        }
    return run


def run_paired_locust(
    settings: BenchmarkSettings,
    schedule: Schedule,
    schedule_path: Path,
    apps: dict[str, RunningApp],  # arm -> its app (several arms may share one, as in the ladder)
    pinning: PinningPlan,
    prefix: Path,
    progress: ProgressDisplay,
    *,
    duration_s: float,
    user_class: str,
    database_pid: int | None,
    during: str,
    locustfile: Path = LOCUSTFILE,
) -> tuple[LocustRun, dict[int, WindowCpu]]:
    """One locust run along a schedule, CPU read at every counted window's edges; an app that
    died meanwhile is an error, never a window of zero requests."""
    boundaries = CpuBoundaries(
        schedule, apps, database_pid, pinning.app_cpus if pinning.enabled else None
    )
    locust = run_locust(
        locust_command(
            host=next(iter(apps.values())).base_url,
            users=settings.users,
            duration_s=duration_s,
            output_prefix=prefix,
            user_classes=[user_class],
            load_processes=settings.load_processes,
            locustfile=locustfile,
            extra_arguments=["--schedule", str(schedule_path)],
        ),
        output_prefix=prefix,
        cpus=pinning.load_cpus if pinning.enabled else None,
        on_tick=progress.tick,
        timeout_s=duration_s + STOP_TIMEOUT_S + 60,
        boundaries=boundaries.moments,
        on_boundary=boundaries.read,
    )
    for app in apps.values():
        if app.process is not None and app.process.poll() is not None:
            project = ARMS[app.name].project
            raise BenchmarkError(f"{project} exited during {during} (see {project}.log)")
    return locust, boundaries.per_window()


class CpuBoundaries:
    """Reads every arm's and PostgreSQL's CPU at each measured window's counted start and end."""

    def __init__(
        self,
        schedule: Schedule,
        apps: dict[str, RunningApp],
        database_pid: int | None,
        app_cpus: tuple[int, ...] | None,  # pinned: nothing but the arms should run there
    ) -> None:
        self.schedule = schedule
        self.app_cpus = app_cpus
        # Several arms may share a process (the ladder's rungs of one app): CPU is read once
        # per process, and a window's "other arms" are the other processes.
        self.pids = {arm: app.pid for arm, app in apps.items()}
        self.database_pid = database_pid
        moments = set()
        for window in schedule.measured():
            moments |= {window.measure_start, window.end}
        self.moments = sorted(moments)
        # planned moment -> (actual time, per-process readings, PostgreSQL's reading, busy
        # seconds of the app CPUs)
        self.readings: dict[
            float, tuple[float, dict[int, TreeCpu], TreeCpu | None, float | None]
        ] = {}

    def read(self, moment: float) -> None:
        before = time.time()
        app_cpus_busy = busy_seconds(self.app_cpus) if self.app_cpus else None
        arms = {pid: read_tree_cpu(pid) for pid in set(self.pids.values()) if pid is not None}
        database = read_tree_cpu(self.database_pid) if self.database_pid else None
        self.readings[moment] = ((before + time.time()) / 2, arms, database, app_cpus_busy)

    def per_window(self) -> dict[int, WindowCpu]:
        cpu: dict[int, WindowCpu] = {}
        for window in self.schedule.measured():
            start = self.readings.get(window.measure_start)
            end = self.readings.get(window.end)
            if start is None or end is None:
                continue
            spent = {pid: cpu_seconds_between(start[1][pid], end[1][pid])
                     for pid in start[1] if pid in end[1]}  # fmt: skip
            database_cpu = None
            if start[2] is not None and end[2] is not None:
                database_cpu = cpu_seconds_between(start[2], end[2])
            own_pid = self.pids.get(window.arm)
            others = [seconds for pid, seconds in spent.items() if pid != own_pid]
            foreign = None
            if start[3] is not None and end[3] is not None and spent:
                foreign = max(end[3] - start[3] - sum(spent.values()), 0.0)
            cpu[window.index] = WindowCpu(
                end[0] - start[0], spent.get(own_pid) if own_pid else None, database_cpu,
                other_arms_cpu_s=sum(others) if others else None, foreign_cpu_s=foreign,
            )  # fmt: skip
        return cpu
