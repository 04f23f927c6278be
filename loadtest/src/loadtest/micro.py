"""`./test.sh micro`: in-process micro-benchmarks (commons/microbench.py) in each app's own
environment, paired per round with their plain-Python baseline; tables, results.json, report."""

import json
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from loadtest.apps import arm_python
from loadtest.host import host_facts
from loadtest.micro_results import (
    PYDANTIC_GROUP,
    SHARED_GROUPS,
    print_tables,
    summarise,
    write_micro_report,
)
from loadtest.pinning import format_cpus, plan_pinning
from loadtest.processes import BenchmarkError, start_process, stop_process
from loadtest.results import create_run_dir, write_results
from loadtest.settings import ARMS, REPOSITORY_ROOT, BenchmarkSettings

KIND = "micro"


@dataclass(frozen=True)
class MicroPlan:
    """How much to measure: processes per environment, rounds per process and group, and the
    least time of one measurement (its calibrated loops)."""

    processes: int
    rounds: int
    min_time_s: float

    @property
    def pairs(self) -> int:
        return self.processes * self.rounds


# Short measurements pair best on a machine that drifts within seconds: a Pydantic round (9
# measurements) lasts about half a second, a container round (14) under a second. An even
# number of processes, so each arm runs first as often as the other (plan_jobs); about two
# minutes in all on the 2-vCPU machines (6 x 6 took three on a busy hour).
DEFAULT_PLAN = MicroPlan(processes=4, rounds=8, min_time_s=0.05)
# 6 pairs: the fewest for which a 95% interval of the median exists (loadtest/stats.py).
QUICK_PLAN = MicroPlan(processes=2, rounds=3, min_time_s=0.02)


@dataclass(frozen=True)
class MicroJob:
    """One fresh `python -m commons.microbench` process."""

    arm: str
    groups: tuple[str, ...]
    process: int

    @property
    def package(self) -> str:
        return ARMS[self.arm].module.split(".")[0]

    @property
    def environment(self) -> str:
        return ARMS[self.arm].project

    @property
    def slug(self) -> str:
        return f"{self.arm}-{'-'.join(self.groups)}-{self.process}"


def plan_jobs(apps: tuple[str, ...], processes: int) -> list[MicroJob]:
    """Per process number: the Pydantic group in every app's environment, the arms' order
    reversed every other time so neither always runs first, then the shared groups once, in
    the last app's environment, in a process of their own (no app imported, so no app's heap
    makes their garbage collections dearer)."""
    jobs = []
    for process in range(processes):
        order = apps if process % 2 == 0 else tuple(reversed(apps))
        jobs += [MicroJob(arm, (PYDANTIC_GROUP,), process) for arm in order]
        jobs.append(MicroJob(apps[-1], SHARED_GROUPS, process))
    return jobs


def microbench_command(job: MicroJob, plan: MicroPlan, output: Path) -> list[str]:
    return [
        str(arm_python(job.arm)), "-m", "commons.microbench", "--app", job.package,
        "--groups", *job.groups, "--rounds", str(plan.rounds),
        "--min-time", str(plan.min_time_s), "--process", str(job.process),
        "--output", str(output),
    ]  # fmt: skip


def run_job(job: MicroJob, plan: MicroPlan, run_dir: Path, cpus: tuple[int, ...] | None) -> dict:
    output = run_dir / "raw" / f"{job.slug}.json"
    log_path = run_dir / "logs" / f"{job.slug}.log"
    output.parent.mkdir(parents=True, exist_ok=True)
    process = start_process(
        microbench_command(job, plan, output), log_path=log_path, cpus=cpus, cwd=REPOSITORY_ROOT
    )
    try:
        return_code = process.wait()
    finally:  # Ctrl-C and SIGTERM too: the process runs in a session of its own
        stop_process(process)
    if return_code != 0:
        lines = log_path.read_text(errors="replace").strip().splitlines() or ["no output"]
        raise BenchmarkError(f"commons.microbench in {job.environment} failed: {lines[-1]}")
    return {"arm": job.arm, "environment": job.environment, **json.loads(output.read_text())}


def run_micro(settings: BenchmarkSettings, console: Console, *, quick: bool) -> Path:
    plan = QUICK_PLAN if quick else DEFAULT_PLAN
    started_at = datetime.now(UTC)
    run_dir = create_run_dir(settings.results_dir, started_at, KIND)
    console.print(f"Results go to {run_dir}", highlight=False)
    pinning = plan_pinning(settings.pin)
    # One CPU of the apps' half: the processes run one at a time, and a fixed CPU keeps the
    # cache and the frequency of every measurement alike.
    cpus = pinning.app_cpus[-1:] if pinning.enabled else None
    pinning_note = (
        f"every micro-benchmark process on CPU {format_cpus(cpus)}" if cpus else pinning.note
    )
    jobs = plan_jobs(settings.apps, plan.processes)
    shared_arm = settings.apps[-1]
    console.print(
        f"Micro-benchmarks: {len(jobs)} processes ({plan.processes} per group and "
        f"environment, {plan.rounds} rounds each, measurements of ≥{plan.min_time_s:g}s, "
        f"garbage collector on); the Pydantic group in {', '.join(settings.apps)}, the "
        f"encoders and the container in {ARMS[shared_arm].project}'s environment; {pinning_note}.",
        highlight=False,
    )
    runs = []
    for number, job in enumerate(jobs, start=1):
        began = time.monotonic()
        console.print(
            f"[{time.strftime('%H:%M:%S')}] {number}/{len(jobs)} {job.environment}: "
            f"{' + '.join(job.groups)} (process {job.process + 1}/{plan.processes}) ...",
            highlight=False,
        )
        runs.append(run_job(job, plan, run_dir, cpus))
        console.print(f"    done in {time.monotonic() - began:.1f}s", highlight=False)
    micro = summarise(runs)
    finished_at = datetime.now(UTC)
    results = {
        "kind": KIND,
        "started_at": started_at.isoformat(),
        "finished_at": finished_at.isoformat(),
        "elapsed_s": round((finished_at - started_at).total_seconds(), 1),
        "host": host_facts(),
        "settings": {
            "apps": list(settings.apps),
            "quick": quick,
            **asdict(plan),
            "pairs_per_benchmark": plan.pairs,
            "shared_groups_arm": shared_arm,
            "pinning": {"cpus": list(cpus) if cpus else None, "note": pinning_note},
            "gc_enabled_during_timing": True,
            "timer": "timeit.Timer with setup 'gc.enable()', loops calibrated per process",
        },
        "micro": micro | {"raw": runs},
    }
    write_results(run_dir, results)
    write_micro_report(run_dir, results)
    print_tables(micro, console)
    console.print(f"Results: {run_dir}", highlight=False)
    return run_dir
