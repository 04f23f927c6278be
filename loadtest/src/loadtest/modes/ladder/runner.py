"""`./test.sh ladder`: the serialisation ladder (commons/ladder.py) timed in every app with the
paired protocol. Each app's rungs are checked against its response_model first; then one
locust run walks groups of four short windows, one group per rung and round:

    v1 response_model | v1 rung | v2 rung | v2 response_model   (orders rotate, see below)

so every rung is paired with its own app's response_model in the adjacent window (its speed-up)
and with the other app's same rung (v2 over v1), under nearly the same machine speed."""

import math
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

import httpx
from rich.console import Console

from commons.ladder import BASE_RUNG, LADDER_PREFIX, RUNG_NAMES
from loadtest.lab.apps import RunningApp
from loadtest.lab.arms import ARMS
from loadtest.lab.errors import LabError
from loadtest.lab.host import host_facts
from loadtest.lab.pinning import PinningPlan, plan_pinning
from loadtest.lab.processes import child_environment
from loadtest.lab.progress import ProgressDisplay
from loadtest.load.calibration import calibrate_load_generator
from loadtest.load.locust_runs import LOCUSTFILES, LocustRun
from loadtest.load.paired import (
    CALIBRATION_S,
    app_cpu_capacity,
    check_local_arms,
    locust_start_s,
    locust_tail_s,
    pin_runner,
    run_paired_locust,
    start_arm,
    start_database,
)
from loadtest.load.schedule import Schedule, build_grouped_schedule
from loadtest.load.verify import verify_ladder
from loadtest.load.windows import WindowRecord, build_window_records, tally_by_name
from loadtest.modes.ladder.report import print_report, write_reports
from loadtest.modes.ladder.results import build_ladder_results, ladder_arm, split_arm
from loadtest.modes.ladder.settings import LadderSettings
from loadtest.output.results_file import write_results
from loadtest.output.run_folder import run_folder

KIND = "ladder"
LADDER_LOCUSTFILE = LOCUSTFILES / "ladder_users.py"


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


def planned_seconds(settings: LadderSettings, rungs: tuple[str, ...]) -> float:
    arms = len(settings.apps) * len(rungs)
    windows = settings.pairs * (len(rungs) - 1) * 2 * len(settings.apps)
    load = arms * settings.warmup_s + windows * settings.window_s + locust_start_s(settings)
    return load + (CALIBRATION_S if settings.calibrate else 0)


def run_ladder(settings: LadderSettings, console: Console) -> Path:
    """Start the apps, verify every rung, time them, write results/<timestamp>-ladder/."""
    check_local_arms(settings)
    rungs = RUNG_NAMES
    started_at = datetime.now(UTC)
    with run_folder(settings.results_dir, started_at, KIND) as folder:
        run_dir = folder.path
        host = host_facts()
        pinning = plan_pinning(settings.pin)
        pin_runner(pinning)
        console.print(f"Results go to {run_dir}", highlight=False)
        console.print(f"Pinning: {pinning.note}", highlight=False)
        environment = child_environment()
        calibration = None
        with ExitStack() as stack:
            # The apps need a database to start; no rung reads it.
            database, pinning = start_database(stack, pinning, console)
            folder.begin_measuring()
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
    document = write_results(run_dir, KIND, results)
    write_reports(run_dir, document)
    print_report(document, console)
    console.print(f"\nWrote {run_dir}/results.json and report.md", highlight=False)
    return run_dir


def check_rungs(app: str, client: httpx.Client, rungs: tuple[str, ...]) -> None:
    """Before timing: every rung answers the posts response_model answers, or nothing is timed
    (`client` is bound to the app's base URL)."""
    for rung, found in verify_ladder(client, rungs).items():
        if found:
            raise LabError(
                f"{ARMS[app].environment}: {LADDER_PREFIX}/{rung} failed verification against "
                f"{BASE_RUNG}: {found[0]}"
            )


def measure_ladder(
    settings: LadderSettings,
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
        warmup_s=settings.warmup_s,
    )
    schedule_path = run_dir / "ladder.schedule.json"
    schedule_path.write_text(schedule.to_json())
    prefix = run_dir / "ladder"
    duration_s = math.ceil(schedule.end - launched + locust_tail_s(settings))
    progress.begin(
        f"ladder · {len(rungs)} rungs × {' / '.join(apps)} in {settings.pairs} rounds", duration_s
    )
    locust, cpu = run_paired_locust(
        settings,
        schedule,
        schedule_path,
        {arm: apps[split_arm(arm)[0]] for arm in hosts},
        pinning,
        prefix,
        progress,
        duration_s=duration_s,
        user_class="LadderUser",
        database_pid=None,
        during="the ladder",
        locustfile=LADDER_LOCUSTFILE,
    )
    records = build_window_records(
        schedule=schedule,
        tallies=tally_by_name(locust.entries),
        cpu=cpu,
        repeat=1,
        app_cpu_capacity=app_cpu_capacity(settings, pinning),
    )
    return records, locust
