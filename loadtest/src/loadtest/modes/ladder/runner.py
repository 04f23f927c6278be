"""`./test.sh ladder`: the serialisation ladder (commons/ladder.py) timed in every app with the
paired protocol. Each app's rungs are checked against its response_model first; then one
locust run walks groups of four short windows, one group per rung and round:

    v1 response_model | v1 rung | v2 rung | v2 response_model   (orders rotate, see below)

so every rung is paired with its own app's response_model in the adjacent window (its speed-up)
and with the other app's same rung (v2 over v1), under nearly the same machine speed."""

import math
import time
from pathlib import Path

import httpx
from rich.console import Console

from commons.ladder import BASE_RUNG, LADDER_PREFIX, RUNG_NAMES
from loadtest.lab.arms import ARMS
from loadtest.lab.errors import LabError
from loadtest.load.locust_runs import LOCUSTFILES, LocustRun
from loadtest.load.paired import (
    app_cpu_capacity,
    locust_start_s,
    locust_tail_s,
    run_paired_locust,
)
from loadtest.load.schedule import Schedule, build_grouped_schedule
from loadtest.load.verify import verify_ladder
from loadtest.load.windows import WindowRecord, build_window_records, tally_by_name
from loadtest.modes.ladder.results import build_ladder_results, ladder_arm, split_arm
from loadtest.modes.ladder.settings import LadderSettings
from loadtest.modes.session import CALIBRATION_S, PairedArms, check_local_arms, open_session

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
    rungs = RUNG_NAMES
    check_local_arms(settings)
    with open_session(KIND, settings.results_dir, console) as session:
        # The apps need a database to start; no rung reads it.
        arms = session.start_paired_arms(settings, planned_seconds(settings, rungs))
        for app, running in arms.apps.items():
            with httpx.Client(base_url=running.base_url, timeout=30) as client:
                check_rungs(app, client, rungs)
        arms.progress.note(f"every rung of {', '.join(arms.apps)} answers response_model's posts")
        records, locust = measure_ladder(settings, arms, rungs, session.run_dir)
    session.finish(
        build_ladder_results(settings, arms.setup, rungs=rungs, records=records, locust=locust)
    )
    return session.run_dir


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
    settings: LadderSettings, arms: PairedArms, rungs: tuple[str, ...], run_dir: Path
) -> tuple[list[WindowRecord], LocustRun]:
    apps, pinning, progress = arms.apps, arms.pinning, arms.progress
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
