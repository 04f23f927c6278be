"""`./test.sh ladder`: the serialisation ladder (commons/ladder.py) timed in every app with the
paired protocol. Each app's rungs are checked against its response_model first; then one
locust run walks groups of four short windows, one group per rung and round:

    v1 response_model | v1 rung | v2 rung | v2 response_model   (orders rotate, see below)

so every rung is paired with its own app's response_model in the adjacent window (its speed-up)
and with the other app's same rung (v2 over v1), under nearly the same machine speed."""

from pathlib import Path

import httpx
from rich.console import Console

from commons.ladder import BASE_RUNG, LADDER_PREFIX, RUNG_NAMES
from commons.synthetic import LADDER_POST_COUNT
from loadtest.lab.arms import ARMS
from loadtest.lab.errors import LabError
from loadtest.lab.http import http_client
from loadtest.load.calibration import CALIBRATION_S
from loadtest.load.locust_runs import LocustRun
from loadtest.load.paired import locust_start_s, run_schedule
from loadtest.load.plan import Scenario, SlotLoad, plan_lab_arms
from loadtest.load.scenarios import post_list
from loadtest.load.schedule import build_grouped_schedule
from loadtest.load.slots import Slot
from loadtest.load.windows import WindowRecord
from loadtest.modes.ladder.results import build_ladder_results, rung_slot
from loadtest.modes.ladder.settings import LadderSettings
from loadtest.modes.ladder.verify import verify_ladder
from loadtest.modes.session import PairedArms, check_local_arms, open_session

KIND = "ladder"


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
                pair = [rung_slot(app, BASE_RUNG), rung_slot(app, rung)]
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
            with http_client(base_url=running.base_url, timeout=30) as client:
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


def rung_scenario(rung: str) -> Scenario:
    """A rung as the paired runner loads it: its path, answering the ladder's posts."""
    return Scenario(rung, rung, post_list(f"{LADDER_PREFIX}/{rung}", LADDER_POST_COUNT))


def measure_ladder(
    settings: LadderSettings, arms: PairedArms, rungs: tuple[str, ...], run_dir: Path
) -> tuple[list[WindowRecord], LocustRun]:
    plan = plan_lab_arms(tuple(arms.apps), tuple(rung_scenario(rung) for rung in rungs))
    loads = {
        rung_slot(app, scenario.name): SlotLoad(scenario.request_for(app))
        for app in plan.arms
        for scenario in plan.scenarios
    }
    _, records, locust = run_schedule(
        settings,
        lambda start: build_grouped_schedule(
            scenario="ladder",
            hosts={slot: arms.apps[Slot.parse(slot).arm].base_url for slot in loads},
            start=start,
            groups=ladder_groups(plan.arms, rungs, settings.pairs),
            window_s=settings.window_s,
            settle_s=settings.settle_s,
            warmup_s=settings.warmup_s,
        ),
        loads,
        arms.apps,
        arms.pinning,
        run_dir / "ladder",
        arms.progress,
        title=f"ladder · {len(rungs)} rungs × {' / '.join(plan.arms)} in {settings.pairs} rounds",
        database_pid=None,
        during="the ladder",
    )
    return records, locust
