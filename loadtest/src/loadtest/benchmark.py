"""The benchmark run: for each repeat and app, a fresh process on a fresh dataset, verified,
warmed up, then each scenario measured, with memory sampled throughout."""

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
from loadtest.database import BenchmarkDatabase, provide_database
from loadtest.dataset import count_visible_posts, load_dataset
from loadtest.docker_stack import ensure_docker_engine, start_container_app, start_docker_stack
from loadtest.host import host_facts
from loadtest.locust_runs import STOP_TIMEOUT_S, LocustRun, locust_command, run_locust
from loadtest.memory import MemoryReading, PeakMemorySampler
from loadtest.pinning import PinningPlan, pin_process_tree, plan_pinning
from loadtest.processes import BenchmarkError, ensure_port_free
from loadtest.progress import ProgressDisplay
from loadtest.report import print_table, write_report
from loadtest.results import build_results, link_latest, write_results
from loadtest.scenarios import SCENARIOS
from loadtest.settings import BenchmarkSettings
from loadtest.verify import verify_scenario

SETTLE_S = 1.0  # let the app go quiet before idle/after memory readings
SCENARIO_USER_CLASS = {"read": "ReadUser", "synthetic": "SyntheticUser", "write": "WriteUser"}


@dataclass
class Cell:
    """One app process's life: one repeat of one app."""

    app: str
    repeat: int
    versions: dict[str, Any] = field(default_factory=dict)
    idle: MemoryReading | None = None
    peak: MemoryReading | None = None
    after: MemoryReading | None = None
    problems: dict[str, list[str]] = field(default_factory=dict)  # verification, per scenario
    runs: dict[str, LocustRun] = field(default_factory=dict)
    writes: dict[str, int] = field(default_factory=dict)  # new rows in the measured window


def interleaved_order(apps: tuple[str, ...], repeats: int) -> list[list[str]]:
    """v1 v2 | v2 v1 | v1 v2 ...: drift on a shared machine cannot favour one app."""
    return [list(apps) if repeat % 2 == 0 else list(reversed(apps)) for repeat in range(repeats)]


def planned_seconds(settings: BenchmarkSettings) -> float:
    per_cell = settings.warmup_s + len(settings.scenarios) * settings.duration_s
    cells = len(settings.apps) * settings.repeats
    return cells * per_cell + (calibration_seconds(settings) if settings.calibrate else 0)


def calibration_seconds(settings: BenchmarkSettings) -> float:
    return min(settings.duration_s, 10)


def locust_timeout(duration_s: float) -> float:
    return duration_s + STOP_TIMEOUT_S + 60


def run_benchmark(settings: BenchmarkSettings, console: Console) -> Path:
    """Run everything, write results/<timestamp>/, print the table; returns the run directory."""
    if settings.docker:
        ensure_docker_engine()  # before anything is written or started
    else:
        for app_name in settings.apps:  # now, not minutes later when that app's turn comes
            ensure_port_free(settings.ports[app_name], f"app_{app_name}")
    started_at = datetime.now(UTC)
    run_dir = settings.results_dir / started_at.strftime("%Y%m%dT%H%M%SZ")
    try:
        run_dir.mkdir(parents=True, exist_ok=False)
    except OSError as error:
        raise BenchmarkError(f"cannot create {run_dir}: {error.strerror}") from None
    host = host_facts()  # before pinning narrows what this process sees
    pinning = plan_pinning(settings.pin and not settings.docker)
    if settings.docker:
        pinning = replace(pinning, note="not pinned: the apps run in containers with the same "
                          "CPU and memory limits (docker-compose.yml)")  # fmt: skip
    if pinning.enabled:
        os.sched_setaffinity(0, pinning.load_cpus)  # the runner's children inherit this
    console.print(f"Results go to {run_dir}", highlight=False)
    console.print(f"Pinning: {pinning.note}", highlight=False)

    cells: list[Cell] = []
    calibration: dict[str, Any] | None = None
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
                    settings, pinning, run_dir / "calibration", progress,
                    calibration_seconds(settings), environment,
                )  # fmt: skip
            for repeat, apps in enumerate(interleaved_order(settings.apps, settings.repeats)):
                for app_name in apps:
                    cell = run_cell(
                        settings, app_name, repeat, database, pinning, run_dir, progress,
                        environment,
                    )  # fmt: skip
                    cells.append(cell)

    finished_at = datetime.now(UTC)
    results = build_results(
        settings=settings,
        cells=cells,
        calibration=calibration,
        host=host,
        database={"kind": database.kind, "server_version": database.server_version},
        pinning=pinning,
        started_at=started_at,
        finished_at=finished_at,
    )
    write_results(run_dir, results)
    write_report(run_dir, results)
    link_latest(settings.results_dir, run_dir)
    print_table(results, console)
    console.print(f"\nWrote {run_dir}/results.json and report.md", highlight=False)
    return run_dir


def run_cell(
    settings: BenchmarkSettings,
    app_name: str,
    repeat: int,
    database: BenchmarkDatabase,
    pinning: PinningPlan,
    run_dir: Path,
    progress: ProgressDisplay,
    environment: dict[str, str],
) -> Cell:
    label = f"repeat {repeat + 1}/{settings.repeats} · app_{app_name}"
    cell = Cell(app_name, repeat)
    cell_dir = run_dir / "runs" / f"{repeat + 1:02d}-{app_name}"
    load_dataset(database.url, settings.dataset_size)
    if settings.docker:
        app = start_container_app(app_name, f"http://127.0.0.1:{settings.ports[app_name]}")
    else:
        app = start_app(
            app_name,
            port=settings.ports[app_name],
            workers=settings.workers,
            database_url=database.url,
            cpus=pinning.app_cpus if pinning.enabled else None,
            log_path=cell_dir / "app.log",
            environment=environment,
        )
    try:
        cell.versions = app.versions
        time.sleep(SETTLE_S)
        cell.idle = app.read_memory()
        for name in settings.scenarios:
            cell.problems[name] = verify_scenario(app.base_url, SCENARIOS[name], database.url)
            if cell.problems[name]:
                progress.note(f"{label}: {name} FAILED verification: {cell.problems[name][0]}")
        verified = [name for name in settings.scenarios if not cell.problems[name]]
        with PeakMemorySampler(app.read_memory) as sampler:
            if verified:
                warm_up(settings, app, verified, cell_dir, progress, label, pinning)
            for name in verified:
                measure_scenario(settings, app, name, cell, cell_dir, progress, label, pinning,
                                 database)  # fmt: skip
        if sampler.samples:
            cell.peak = MemoryReading(sampler.peak_rss_mib, sampler.peak_uss_mib)
        time.sleep(SETTLE_S)
        cell.after = app.read_memory()
    finally:
        app.stop()
    return cell


def warm_up(
    settings: BenchmarkSettings,
    app: RunningApp,
    scenarios: list[str],
    cell_dir: Path,
    progress: ProgressDisplay,
    label: str,
    pinning: PinningPlan,
) -> None:
    """Every verified scenario at once, discarded: pools, caches and code paths get warm."""
    progress.begin(f"{label} · warm-up", settings.warmup_s)
    prefix = cell_dir / "warmup"
    command = locust_command(
        host=app.base_url,
        users=settings.users,
        duration_s=settings.warmup_s,
        output_prefix=prefix,
        user_classes=[SCENARIO_USER_CLASS[name] for name in scenarios],
        load_processes=settings.load_processes,
    )
    run_locust(
        command,
        output_prefix=prefix,
        cpus=pinning.load_cpus if pinning.enabled else None,
        on_tick=progress.tick,
        timeout_s=locust_timeout(settings.warmup_s),
    )


def measure_scenario(
    settings: BenchmarkSettings,
    app: RunningApp,
    name: str,
    cell: Cell,
    cell_dir: Path,
    progress: ProgressDisplay,
    label: str,
    pinning: PinningPlan,
    database: BenchmarkDatabase,
) -> None:
    progress.begin(f"{label} · {name}", settings.duration_s)
    prefix = cell_dir / name
    command = locust_command(
        host=app.base_url,
        users=settings.users,
        duration_s=settings.duration_s,
        output_prefix=prefix,
        user_classes=[SCENARIO_USER_CLASS[name]],
        load_processes=settings.load_processes,
    )
    rows_before = count_visible_posts(database.url) if name == "write" else 0
    cell.runs[name] = run_locust(
        command,
        output_prefix=prefix,
        cpus=pinning.load_cpus if pinning.enabled else None,
        on_tick=progress.tick,
        timeout_s=locust_timeout(settings.duration_s),
    )
    if app.process is not None and app.process.poll() is not None:
        raise BenchmarkError(f"app_{app.name} exited during the {name} scenario (see its app.log)")
    if name == "write":
        cell.writes[name] = count_visible_posts(database.url) - rows_before
