"""`./test.sh sweep`: every cell (shape, size) in every arm with the paired protocol. Each arm's
answer to each cell is checked in full first (and the reads compared across arms), which also
times one request of each alone; then one locust run walks the timetable (timetable.py): per
round, every cell a group of one window per arm, the apps' order rotating."""

from pathlib import Path

from rich.console import Console

from loadtest.lab.apps import RunningApp
from loadtest.lab.http import http_client
from loadtest.load.calibration import CALIBRATION_S
from loadtest.load.cell_timetable import CellTiming, build_sweep_schedule, cell_timing
from loadtest.load.cells import CellProbe, cell_slot
from loadtest.load.locust_runs import LocustRun
from loadtest.load.paired import run_schedule
from loadtest.load.plan import Request, Scenario, SlotLoad, plan_lab_arms
from loadtest.load.schedule import Schedule
from loadtest.load.slots import Slot
from loadtest.load.windows import WindowRecord
from loadtest.modes.session import PairedArms, check_local_arms, open_session
from loadtest.modes.sweep.cells import (
    Cell,
    cell_request,
    compare_reads,
    plan_cells,
    probe_cell,
)
from loadtest.modes.sweep.results import build_sweep_results
from loadtest.modes.sweep.settings import SweepSettings

KIND = "sweep"
# Before the timetable is known: starting the apps and checking every cell.
PREPARATION_S = 20.0


def run_sweep(settings: SweepSettings, console: Console) -> Path:
    """Start the apps, verify and time every cell, sweep, write results/<timestamp>-sweep/."""
    cells = plan_cells(settings)
    check_local_arms(settings)
    with open_session(KIND, settings.results_dir, console) as session:
        estimate = PREPARATION_S + (CALIBRATION_S if settings.calibrate else 0)
        # The bulk cells write to the database; the others never read it.
        arms = session.start_paired_arms(settings, estimate)
        requests = {cell: cell_request(cell, settings.comments) for cell in cells}
        probes = verify_cells(arms.apps, requests)
        arms.progress.note(
            f"every cell of {', '.join(arms.apps)} verified ({len(cells)} cells, reads identical "
            "in every arm)"
        )
        timings = {
            cell: cell_timing(settings, {app: probe.seconds for app, probe in probes[cell].items()})
            for cell in cells
        }
        records, locust, schedule = measure_sweep(
            settings, arms, session.run_dir, cells, requests, timings
        )
    session.finish(
        build_sweep_results(
            settings,
            arms.setup,
            cells=cells,
            requests=requests,
            probes=probes,
            timings=timings,
            schedule=schedule,
            records=records,
            locust=locust,
        )
    )
    return session.run_dir


def verify_cells(
    apps: dict[str, RunningApp], requests: dict[Cell, Request]
) -> dict[Cell, dict[str, CellProbe]]:
    """Before timing: every arm answers every cell in full, and every read the same posts in
    every arm, or nothing is timed (a LabError names the first problem)."""
    clients = {
        app: http_client(base_url=running.base_url, timeout=60) for app, running in apps.items()
    }
    try:
        probes: dict[Cell, dict[str, CellProbe]] = {}
        for cell, request in requests.items():
            probes[cell] = {
                app: probe_cell(client, cell, request, cell_slot(cell, app))
                for app, client in clients.items()
            }
            if cell.is_read:
                compare_reads(cell, probes[cell])
        return probes
    finally:
        for client in clients.values():
            client.close()


def measure_sweep(
    settings: SweepSettings,
    arms: PairedArms,
    run_dir: Path,
    cells: list[Cell],
    requests: dict[Cell, Request],
    timings: dict[Cell, CellTiming],
) -> tuple[list[WindowRecord], LocustRun, Schedule]:
    """One locust run along the timetable: each slot (an app's cell) with its users."""
    scenarios = tuple(Scenario(cell.name, cell.name, requests[cell]) for cell in cells)
    plan = plan_lab_arms(tuple(arms.apps), scenarios)
    loads = {
        cell_slot(cell, app): SlotLoad(
            plan.scenario(cell.name).request_for(app), timings[cell].users[app]
        )
        for cell in cells
        for app in plan.arms
    }
    hosts = {slot: arms.apps[Slot.parse(slot).arm].base_url for slot in loads}
    schedule, records, locust = run_schedule(
        settings,
        lambda start: build_sweep_schedule(settings, cells, timings, hosts, start),
        loads,
        arms.apps,
        arms.pinning,
        run_dir / "sweep",
        arms.progress,
        title=f"sweep · {len(cells)} cells × {' / '.join(arms.apps)} in {settings.pairs} rounds",
        database_pid=arms.database.server_pid,
        during="the sweep",
    )
    return records, locust, schedule
