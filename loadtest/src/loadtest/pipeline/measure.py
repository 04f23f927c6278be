"""One scenario measured on every arm, as the benchmark and compare run it: one locust run of
the arms' slots in rotating rounds (load/paired.py), each window's figures and a write's new
rows; each arm's memory after the load; and how long a run is planned to take."""

import time
from pathlib import Path

from loadtest.analysis.fit import declared_timetables, probe_seconds, timed
from loadtest.lab.apps import RunningApp
from loadtest.lab.database import LabDatabase
from loadtest.lab.dataset import count_posts_titled
from loadtest.lab.memory import MemoryReading, PeakMemorySampler
from loadtest.lab.pinning import PinningPlan
from loadtest.lab.progress import ProgressDisplay
from loadtest.lab.startup import SECONDS_PER_SAMPLE
from loadtest.lab.statements import read_statements, statements_between
from loadtest.load.calibration import CALIBRATION_S
from loadtest.load.paired import locust_start_s, run_schedule
from loadtest.load.plan import SlotLoad
from loadtest.load.scenarios import write_title
from loadtest.load.schedule import WARMUP, build_schedule
from loadtest.load.windows import per_slot, tally_by_name
from loadtest.pipeline.records import ArmLife, ScenarioRun
from loadtest.pipeline.settings import BenchmarkSettings
from loadtest.pipeline.wrk import CROSS_CHECK_SCENARIOS, wrk_round_seconds

QUIET_S = 1.0  # let the apps go quiet before idle/after memory readings


def planned_seconds(settings: BenchmarkSettings) -> float:
    declared = (
        {} if settings.fit else declared_timetables(settings, settings.plan, settings.set_by_hand)
    )
    per_scenario = [
        len(settings.apps)
        * (settings.warmup_s + settings.pairs * timed(settings, declared.get(name)).window_s)
        for name in settings.scenarios
    ]
    load = settings.repeats * (sum(per_scenario) + len(per_scenario) * locust_start_s(settings))
    if settings.cross_check:
        wrk_scenarios = [name for name in CROSS_CHECK_SCENARIOS if name in settings.scenarios]
        rounds = settings.repeats * settings.pairs * len(wrk_scenarios)
        load += rounds * wrk_round_seconds(settings, len(settings.apps))
    if settings.fit:  # the windows fitted may be longer: the estimate grows once they are
        load += len(settings.scenarios) * probe_seconds(len(settings.apps))
    return load + (CALIBRATION_S if settings.calibrate else 0) + startup_seconds(settings)


def startup_seconds(settings: BenchmarkSettings) -> float:
    if settings.docker:
        return 0.0
    return SECONDS_PER_SAMPLE * settings.startup_samples * len(settings.apps)


def read_memory_after_load(
    samplers: dict[str, PeakMemorySampler],
    apps: dict[str, RunningApp],
    lives: dict[str, ArmLife],
) -> None:
    """Each arm's peak under load (its sampler stopped), then, once it went quiet, its memory
    after load."""
    for arm, sampler in samplers.items():
        sampler.stop()
        if sampler.samples:
            lives[arm].peak = MemoryReading(sampler.peak_rss_mib, sampler.peak_uss_mib)
    time.sleep(QUIET_S)
    for arm, app in apps.items():
        lives[arm].after = app.read_memory()


def measure_scenario(
    settings: BenchmarkSettings,
    name: str,
    repeat: int,
    apps: dict[str, RunningApp],
    database: LabDatabase | None,
    pinning: PinningPlan,
    repeat_dir: Path,
    progress: ProgressDisplay,
    *,
    count_rows: bool = True,
) -> ScenarioRun:
    """One locust run of one scenario: the verified arms' slots in rotating rounds. A write's
    new rows are counted in the lab's database (`count_rows`, the lab's WRITE)."""
    scenario = settings.plan.scenario(name)
    writes = scenario.request.method != "GET"
    counted_in = database if count_rows and writes else None
    titles = [write_title(arm) for arm in apps]
    rows_before = count_posts_titled(counted_in.url, titles) if counted_in else {}
    # Each uvicorn worker counts its own: with several, two readings rarely meet one process.
    counted = settings.workers == 1
    statements_before = {
        arm: read_statements(app.base_url) if counted else None for arm, app in apps.items()
    }
    schedule, records, locust = run_schedule(
        settings,
        lambda start: build_schedule(
            scenario=name,
            hosts={arm: app.base_url for arm, app in apps.items()},
            start=start,
            rounds=settings.pairs,
            window_s=settings.window_s,
            settle_s=settings.settle_s,
            warmup_s=settings.warmup_s,
        ),
        {arm: SlotLoad(scenario.request_for(arm)) for arm in apps},
        apps,
        pinning,
        repeat_dir / name,
        progress,
        # Past a compare run's pilot, the repeats it added have no planned total to show.
        title=f"{settings.REPEAT_WORD} {repeat}"
        + (f"/{settings.repeats}" if repeat <= settings.repeats else " (added after the pilot)")
        + f" · {name} · {' / '.join(apps)} in "
        f"{settings.pairs} rounds",
        database_pid=database.server_pid if database is not None else None,
        during=f"the {name} scenario",
        repeat=repeat,
    )
    statements = {
        arm: statements_between(
            statements_before[arm], read_statements(app.base_url) if counted else None
        )
        for arm, app in apps.items()
    }
    tallies = tally_by_name(locust.entries)
    warmup_requests = per_slot(tallies, "requests", WARMUP)
    run = ScenarioRun(
        repeat=repeat,
        scenario=name,
        arms=tuple(apps),
        windows=records,
        locust=locust,
        acknowledged=per_slot(tallies, "successes"),
        failures=per_slot(tallies, "failures"),
        warmup_requests={arm: warmup_requests.get(arm, 0) for arm in apps},
        writes=writes,
        statements={arm: count for arm, count in statements.items() if count is not None},
    )
    if counted_in is not None:
        rows_after = count_posts_titled(counted_in.url, titles)
        run.new_rows = {
            arm: rows_after[write_title(arm)] - rows_before[write_title(arm)] for arm in apps
        }
    return run
