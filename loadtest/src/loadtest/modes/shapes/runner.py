"""`./test.sh shapes`: every cell of the request-path shapes (cells.py) in every arm, with the
paired protocol: the app (app.py) generated in each arm's idiom and started in its environment,
every cell verified in full in every arm (the same JSON, the union's members chosen alike) and
timed alone, then one locust run along the sweep's timetable: per round, every cell a group of
one window per arm, the apps' order rotating."""

import tempfile
from pathlib import Path

from rich.console import Console

from loadtest.generated.subjects import idiom_of
from loadtest.lab.apps import RunningApp, start_app
from loadtest.lab.arms import arm_python
from loadtest.lab.http import http_client
from loadtest.lab.startup import HEALTH_POLL_S
from loadtest.load.calibration import CALIBRATION_S
from loadtest.load.cell_timetable import CellTiming, build_sweep_schedule, cell_timing
from loadtest.load.cells import CellProbe, cell_slot
from loadtest.load.locust_runs import LocustRun
from loadtest.load.paired import PairedSetup, run_schedule
from loadtest.load.plan import Request, Scenario, SlotLoad, plan_lab_arms
from loadtest.load.schedule import Schedule
from loadtest.load.windows import WindowRecord
from loadtest.modes.session import RunSession, check_local_arms, open_session
from loadtest.modes.shapes.app import MODULE, generate
from loadtest.modes.shapes.cells import ShapeCell, cell_request, plan_cells, probe_cell
from loadtest.modes.shapes.results import build_shapes_results
from loadtest.modes.shapes.settings import ShapesSettings

KIND = "shapes"
PREPARATION_S = 20.0  # before the timetable is known: starting the apps, checking every cell


def start_shape_app(
    session: RunSession, settings: ShapesSettings, arm: str, folder: Path
) -> RunningApp:
    """The generated app in the arm's environment (plain uvicorn: no database, no lab
    protocol), stopped when the session ends."""
    port = settings.ports[arm]
    running = start_app(
        arm,
        port=port,
        workers=settings.workers,
        database_url="",
        cpus=session.pinning.app_cpus if session.pinning.enabled else None,
        log_path=session.run_dir / f"{arm}.log",
        environment=session.environment | {"PYTHONPATH": str(folder)},
        poll_s=HEALTH_POLL_S,
        command=[
            str(arm_python(arm)),
            "-m",
            "uvicorn",
            MODULE,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(settings.workers),
            "--no-access-log",
            "--log-level",
            "warning",
        ],
    )
    session.stack.callback(running.stop)
    return running


def verify_cells(
    apps: dict[str, RunningApp], requests: dict[ShapeCell, Request]
) -> dict[ShapeCell, dict[str, CellProbe]]:
    """Before timing: every arm answers every cell in full, or nothing is timed."""
    probes: dict[ShapeCell, dict[str, CellProbe]] = {}
    clients = {arm: http_client(base_url=app.base_url, timeout=60) for arm, app in apps.items()}
    try:
        for cell, request in requests.items():
            probes[cell] = {
                arm: probe_cell(client, cell, request, cell_slot(cell, arm))
                for arm, client in clients.items()
            }
        return probes
    finally:
        for client in clients.values():
            client.close()


def run_shapes(settings: ShapesSettings, console: Console) -> Path:
    """Generate the apps, verify and time every cell, write results/<timestamp>-shapes/."""
    cells = plan_cells(settings)
    check_local_arms(settings)
    with open_session(KIND, settings.results_dir, console) as session:
        scratch = Path(
            session.stack.enter_context(tempfile.TemporaryDirectory(prefix="lab-shapes-"))
        )
        session.pin(settings.pin, load_side=("locust", "the runner"))
        folders = {
            idiom: generate(idiom, scratch / idiom)
            for idiom in {idiom_of(a) for a in settings.apps}
        }
        progress = session.show_progress(
            PREPARATION_S + (CALIBRATION_S if settings.calibrate else 0)
        )
        calibration = session.calibrate(settings) if settings.calibrate else None
        apps = {
            arm: start_shape_app(session, settings, arm, folders[idiom_of(arm)])
            for arm in settings.apps
        }
        session.begin_measuring()
        requests = {cell: cell_request(cell) for cell in cells}
        probes = verify_cells(apps, requests)
        progress.note(
            f"every cell of {', '.join(apps)} verified ({len(cells)} cells, the same answers in "
            "every arm)"
        )
        timings = {
            cell: cell_timing(settings, {arm: probe.seconds for arm, probe in probes[cell].items()})
            for cell in cells
        }
        records, locust, schedule = measure_shapes(
            settings, session, apps, cells, requests, timings
        )
    versions = {arm: app.versions for arm, app in apps.items()}
    session.finish(
        build_shapes_results(
            settings,
            PairedSetup(session.pinning, calibration, versions),
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


def measure_shapes(
    settings: ShapesSettings,
    session: RunSession,
    apps: dict[str, RunningApp],
    cells: list[ShapeCell],
    requests: dict[ShapeCell, Request],
    timings: dict[ShapeCell, CellTiming],
) -> tuple[list[WindowRecord], LocustRun, Schedule]:
    """One locust run along the timetable: each slot (an arm's cell) with its users."""
    plan = plan_lab_arms(
        tuple(apps), tuple(Scenario(cell.name, cell.name, requests[cell]) for cell in cells)
    )
    loads = {
        cell_slot(cell, arm): SlotLoad(
            plan.scenario(cell.name).request_for(arm), timings[cell].users[arm]
        )
        for cell in cells
        for arm in plan.arms
    }
    hosts = {cell_slot(cell, arm): apps[arm].base_url for cell in cells for arm in apps}
    assert session.progress is not None
    schedule, records, locust = run_schedule(
        settings,
        lambda start: build_sweep_schedule(settings, cells, timings, hosts, start, KIND),
        loads,
        apps,
        session.pinning,
        session.run_dir / "shapes",
        session.progress,
        title=f"shapes · {len(cells)} cells × {' / '.join(apps)} in {settings.pairs} rounds",
        database_pid=None,
        during="the shapes",
    )
    return records, locust, schedule
