"""The paired run every mode that loads the arms uses: one locust process along a schedule of
windows, each slot sending what the plan says, every arm's (and PostgreSQL's) CPU read at each
counted window's edges, and one record per counted window."""

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadtest.lab.apps import RunningApp
from loadtest.lab.cpu import TreeCpu, busy_seconds, cpu_seconds_between, read_tree_cpu
from loadtest.lab.errors import LabError
from loadtest.lab.files import write_text_safely
from loadtest.lab.pinning import PinningPlan
from loadtest.lab.progress import ProgressDisplay
from loadtest.lab.services import log_tail
from loadtest.load.locust_runs import (
    LOCUSTFILES,
    STOP_TIMEOUT_S,
    LocustRun,
    locust_command,
    run_locust,
)
from loadtest.load.plan import SlotLoad, write_slot_loads
from loadtest.load.schedule import Schedule
from loadtest.load.settings import PairedLoadSettings
from loadtest.load.slots import Slot
from loadtest.load.windows import WindowCpu, WindowRecord, build_window_records, tally_by_name

PAIRED_LOCUSTFILE = LOCUSTFILES / "paired_user.py"
PAIRED_USER = "PairedUser"

# Locust's start-up (imports, spawning users) before the schedule's first window; a late start
# only shortens the first warm-up window.
LOCUST_START_S = 3.0
LOCUST_START_PER_EXTRA_PROCESS_S = 1.0
# With --processes, the master holds a window's requests only once a worker has reported them
# (every 3 s, and once more on quitting): locust runs this long past the last window.
LOCUST_TAIL_S = 1.0
LOCUST_TAIL_DISTRIBUTED_S = 4.0


@dataclass(frozen=True)
class PairedSetup:
    """What stands behind a paired run's figures besides its windows: where things ran, how
    fast the load generator went on its own, and each arm's versions (its /health)."""

    pinning: PinningPlan
    calibration: dict[str, Any] | None
    versions: dict[str, dict[str, Any]]


def locust_start_s(settings: PairedLoadSettings) -> float:
    workers = settings.load_processes if settings.load_processes > 1 else 0
    return LOCUST_START_S + LOCUST_START_PER_EXTRA_PROCESS_S * workers


def locust_tail_s(settings: PairedLoadSettings) -> float:
    return LOCUST_TAIL_DISTRIBUTED_S if settings.load_processes > 1 else LOCUST_TAIL_S


def app_cpu_capacity(settings: PairedLoadSettings, pinning: PinningPlan) -> float:
    """CPUs an app can keep busy: its pinned CPUs, but one per uvicorn worker at most."""
    return float(min(len(pinning.app_cpus), settings.workers)) or 1.0


def run_schedule(
    settings: PairedLoadSettings,
    build: Callable[[float], Schedule],
    loads: dict[str, SlotLoad],
    apps: dict[str, RunningApp],
    pinning: PinningPlan,
    prefix: Path,
    progress: ProgressDisplay,
    *,
    title: str,
    database_pid: int | None,
    during: str,
    repeat: int = 1,
) -> tuple[Schedule, list[WindowRecord], LocustRun]:
    """One locust run along the schedule `build(start)` makes for a start a few seconds ahead
    (locust's own start-up), every slot sending its request (`loads`) in its windows, CPU read
    at every counted window's edges; the schedule and the plan are kept beside locust's files
    (`prefix`.schedule.json, `prefix`.plan.json). `apps`: every arm's running app, by name."""
    launched = time.time()
    schedule = build(launched + locust_start_s(settings))
    schedule_path = prefix.with_name(f"{prefix.name}.schedule.json")
    write_text_safely(schedule_path, schedule.to_json())
    plan_path = prefix.with_name(f"{prefix.name}.plan.json")
    write_slot_loads(plan_path, loads)
    duration_s = math.ceil(schedule.end - launched + locust_tail_s(settings))
    progress.begin(title, duration_s)
    # Several slots may share a process (the ladder's rungs of one app).
    slot_apps = {slot: apps[Slot.parse(slot).arm] for slot in schedule.hosts}
    boundaries = CpuBoundaries(
        schedule, slot_apps, database_pid, pinning.app_cpus if pinning.enabled else None
    )
    locust = run_locust(
        locust_command(
            host=next(iter(apps.values())).base_url,
            users=settings.users,
            duration_s=duration_s,
            output_prefix=prefix,
            user_classes=[PAIRED_USER],
            load_processes=settings.load_processes,
            locustfile=PAIRED_LOCUSTFILE,
            extra_arguments=["--schedule", str(schedule_path), "--plan", str(plan_path)],
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
            what = app.what or app.name
            last = f": {log_tail(app.log_path)}" if app.log_path is not None else ""
            raise LabError(f"{what} exited during {during} (see {what}.log){last}")
    records = build_window_records(
        schedule=schedule,
        tallies=tally_by_name(locust.entries),
        cpu=boundaries.per_window(),
        repeat=repeat,
        app_cpu_capacity=app_cpu_capacity(settings, pinning),
    )
    return schedule, records, locust


class CpuBoundaries:
    """Reads every arm's and PostgreSQL's CPU at each measured window's counted start and end."""

    def __init__(
        self,
        schedule: Schedule,
        apps: dict[str, RunningApp],  # slot -> its arm's app
        database_pid: int | None,
        app_cpus: tuple[int, ...] | None,  # pinned: nothing but the arms should run there
    ) -> None:
        self.schedule = schedule
        self.app_cpus = app_cpus
        # Several slots may share a process (the ladder's rungs of one app): CPU is read once
        # per process, and a window's "other arms" are the other processes.
        self.pids = {slot: app.pid for slot, app in apps.items()}
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
            spent = {
                pid: cpu_seconds_between(start[1][pid], end[1][pid])
                for pid in start[1]
                if pid in end[1]
            }
            database_cpu = None
            if start[2] is not None and end[2] is not None:
                database_cpu = cpu_seconds_between(start[2], end[2])
            own_pid = self.pids.get(window.slot)
            others = [seconds for pid, seconds in spent.items() if pid != own_pid]
            foreign = None
            if start[3] is not None and end[3] is not None and spent:
                foreign = max(end[3] - start[3] - sum(spent.values()), 0.0)
            cpu[window.index] = WindowCpu(
                end[0] - start[0],
                spent.get(own_pid) if own_pid else None,
                database_cpu,
                other_arms_cpu_s=sum(others) if others else None,
                foreign_cpu_s=foreign,
            )
        return cpu
