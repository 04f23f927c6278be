"""`./test.sh ladder`: the serialisation ladder (commons/ladder.py) timed in every app with the
paired protocol. Each app's rungs are checked against its response_model first; then one
locust run walks groups of four short windows, one group per rung and round:

    v1 response_model | v1 rung | v2 rung | v2 response_model   (orders rotate, see below)

so every rung is paired with its own app's response_model in the adjacent window (its speed-up)
and with the other app's same rung (v2 over v1), under nearly the same machine speed."""

import math
import os
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

import httpx
from rich.console import Console

from commons.ladder import BASE_RUNG, LADDER_PREFIX, RUNG_NAMES
from loadtest.apps import RunningApp
from loadtest.benchmark import (
    CALIBRATION_S,
    app_cpu_capacity,
    locust_start_s,
    locust_tail_s,
    run_paired_locust,
    start_arm,
)
from loadtest.calibration import calibrate_load_generator
from loadtest.database import check_configured_url, provide_database
from loadtest.host import host_facts
from loadtest.ladder_results import (
    build_ladder_results,
    ladder_arm,
    print_ladder,
    split_arm,
    write_ladder_report,
)
from loadtest.locust_runs import LocustRun
from loadtest.pinning import PinningPlan, pin_process_tree, plan_pinning
from loadtest.processes import BenchmarkError, ensure_port_free
from loadtest.progress import ProgressDisplay
from loadtest.results import create_run_dir, write_results
from loadtest.schedule import Schedule, build_grouped_schedule
from loadtest.settings import ARMS, LADDER_WARMUP_S, REPOSITORY_ROOT, BenchmarkSettings
from loadtest.verify import verify_ladder
from loadtest.windows import WindowRecord, build_window_records, tally_by_name

LADDER_LOCUSTFILE = REPOSITORY_ROOT / "loadtest" / "src" / "loadtest" / "ladder_locustfile.py"


def ladder_groups(apps: tuple[str, ...], rungs: tuple[str, ...], rounds: int) -> list[list[str]]:
    """Per round, one group per rung above response_model: each app's response_model window
    next to its rung window. Orders rotate, so over four groups each app has response_model
    first twice, and the apps take turns going first (for two apps: b X X' b', b' X' X b,
    X b b' X', X' b' b X, where ' marks v2); the rungs' order rotates by round too."""
    upper = [rung for rung in rungs if rung != BASE_RUNG]
    groups = []
    for round_ in range(rounds):
        for position in range(len(upper)):
            rung_index = (position + round_) % len(upper)
            rung = upper[rung_index]
            turn = round_ + rung_index  # a rung's groups cycle through the four orders
            order = apps if turn % 2 == 0 else tuple(reversed(apps))
            group = []
            for index, app in enumerate(order):
                pair = [ladder_arm(app, BASE_RUNG), ladder_arm(app, rung)]
                group += pair if (index + turn // 2) % 2 == 0 else pair[::-1]
            groups.append(group)
    return groups


def planned_seconds(settings: BenchmarkSettings, rungs: tuple[str, ...]) -> float:
    arms = len(settings.apps) * len(rungs)
    windows = settings.pairs * (len(rungs) - 1) * 2 * len(settings.apps)
    load = arms * LADDER_WARMUP_S + windows * settings.window_s + locust_start_s(settings)
    return load + (CALIBRATION_S if settings.calibrate else 0)


def run_ladder(settings: BenchmarkSettings, console: Console) -> Path:
    """Start the apps, verify every rung, time them, write results/<timestamp>-ladder/."""
    check_configured_url()
    for app in settings.apps:
        ensure_port_free(settings.ports[app], ARMS[app].project)
    rungs = RUNG_NAMES
    started_at = datetime.now(UTC)
    run_dir = create_run_dir(settings.results_dir, started_at, "ladder")
    host = host_facts()
    pinning = plan_pinning(settings.pin)
    if pinning.enabled:
        os.sched_setaffinity(0, pinning.load_cpus)
    console.print(f"Results go to {run_dir}", highlight=False)
    console.print(f"Pinning: {pinning.note}", highlight=False)
    environment = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    calibration = None
    with ExitStack() as stack:
        database = provide_database(stack)  # the apps need one to start; no rung reads it
        if database.server_pid and pinning.enabled:
            pin_process_tree(database.server_pid, pinning.load_cpus)
        with ProgressDisplay(planned_seconds(settings, rungs), console) as progress:
            if settings.calibrate:
                calibration = calibrate_load_generator(
                    settings, pinning, run_dir, progress, CALIBRATION_S, environment
                )
            apps: dict[str, RunningApp] = {}
            for app in settings.apps:
                apps[app] = start_arm(settings, app, database, pinning, run_dir, environment)
                stack.callback(apps[app].stop)
            for app, running in apps.items():
                with httpx.Client(base_url=running.base_url, timeout=30) as client:
                    check_rungs(app, client, rungs)
            progress.note(f"every rung of {', '.join(apps)} answers response_model's posts")
            records, locust = measure_ladder(settings, apps, rungs, pinning, run_dir, progress)
        versions = {app: running.versions for app, running in apps.items()}
    results = build_ladder_results(
        settings=settings,
        rungs=rungs,
        records=records,
        locust=locust,
        calibration=calibration,
        versions=versions,
        host=host,
        pinning=pinning,
        started_at=started_at,
        finished_at=datetime.now(UTC),
    )
    write_results(run_dir, results)
    write_ladder_report(run_dir, results)
    print_ladder(results, console)
    console.print(f"\nWrote {run_dir}/results.json and report.md", highlight=False)
    return run_dir


def check_rungs(app: str, client: httpx.Client, rungs: tuple[str, ...]) -> None:
    """Before timing: every rung answers the posts response_model answers, or nothing is timed
    (`client` is bound to the app's base URL)."""
    for rung, found in verify_ladder(client, rungs).items():
        if found:
            raise BenchmarkError(
                f"{ARMS[app].project}: {LADDER_PREFIX}/{rung} failed verification against "
                f"{BASE_RUNG}: {found[0]}"
            )


def measure_ladder(
    settings: BenchmarkSettings,
    apps: dict[str, RunningApp],
    rungs: tuple[str, ...],
    pinning: PinningPlan,
    run_dir: Path,
    progress: ProgressDisplay,
) -> tuple[list[WindowRecord], LocustRun]:
    launched = time.time()
    hosts = {
        ladder_arm(app, rung): f"{running.base_url}{LADDER_PREFIX}/{rung}"
        for app, running in apps.items()
        for rung in rungs
    }
    schedule: Schedule = build_grouped_schedule(
        scenario="ladder",
        hosts=hosts,
        start=launched + locust_start_s(settings),
        groups=ladder_groups(tuple(apps), rungs, settings.pairs),
        window_s=settings.window_s,
        settle_s=settings.settle_s,
        warmup_s=LADDER_WARMUP_S,
    )
    schedule_path = run_dir / "ladder.schedule.json"
    schedule_path.write_text(schedule.to_json())
    prefix = run_dir / "ladder"
    duration_s = math.ceil(schedule.end - launched + locust_tail_s(settings))
    progress.begin(f"ladder · {len(rungs)} rungs × {' / '.join(apps)} in {settings.pairs} "
                   "rounds", duration_s)  # fmt: skip
    locust, cpu = run_paired_locust(
        settings, schedule, schedule_path, {arm: apps[split_arm(arm)[0]] for arm in hosts},
        pinning, prefix, progress, duration_s=duration_s, user_class="LadderUser",
        database_pid=None, during="the ladder", locustfile=LADDER_LOCUSTFILE,
    )  # fmt: skip
    records = build_window_records(
        schedule=schedule,
        tallies=tally_by_name(locust.entries),
        cpu=cpu,
        repeat=1,
        app_cpu_capacity=app_cpu_capacity(settings, pinning),
    )
    return records, locust
