"""`./test.sh micro`: in-process micro-benchmarks (commons/probes/microbench/) in each arm's
own environment, paired per round with their plain-Python baseline."""

import json
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from loadtest.lab.arms import ARMS, arm_python
from loadtest.lab.errors import LabError
from loadtest.lab.paths import REPOSITORY_ROOT
from loadtest.lab.pinning import format_cpus, plan_pinning
from loadtest.lab.processes import start_process, stop_process
from loadtest.modes.micro.results import PER_ARM_GROUPS, SHARED_GROUPS, build_micro_results
from loadtest.modes.micro.settings import MicroPlan, MicroSettings
from loadtest.modes.session import open_session

KIND = "micro"


@dataclass(frozen=True)
class MicroJob:
    """One fresh `python -m commons.probes.microbench` process."""

    arm: str
    groups: tuple[str, ...]
    process: int

    @property
    def package(self) -> str:
        return ARMS[self.arm].package

    @property
    def environment(self) -> str:
        return ARMS[self.arm].environment

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
        jobs += [MicroJob(arm, PER_ARM_GROUPS, process) for arm in order]
        jobs.append(MicroJob(apps[-1], SHARED_GROUPS, process))
    return jobs


def microbench_command(job: MicroJob, plan: MicroPlan, output: Path) -> list[str]:
    return [
        str(arm_python(job.arm)),
        "-m",
        "commons.probes.microbench",
        "--app",
        job.package,
        "--groups",
        *job.groups,
        "--rounds",
        str(plan.rounds),
        "--min-time",
        str(plan.min_time_s),
        "--process",
        str(job.process),
        "--output",
        str(output),
    ]


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
        raise LabError(f"commons.probes.microbench in {job.environment} failed: {lines[-1]}")
    return {"arm": job.arm, "environment": job.environment, **json.loads(output.read_text())}


def run_micro(settings: MicroSettings, console: Console) -> Path:
    plan = settings.plan
    with open_session(KIND, settings.results_dir, console) as session:
        run_dir = session.run_dir
        planned = plan_pinning(settings.pin, load_side=())
        # One CPU of the apps' half: the processes run one at a time, and a fixed CPU keeps the
        # cache and the frequency of every measurement alike.
        cpus = planned.app_cpus[-1:] if planned.enabled else None
        note = f"every micro-benchmark process on CPU {format_cpus(cpus)}" if cpus else planned.note
        session.pin(settings.pin, load_side=(), note=note)
        jobs = plan_jobs(settings.apps, plan.processes)
        shared_arm = settings.apps[-1]
        console.print(
            f"Micro-benchmarks: {len(jobs)} processes ({plan.processes} per group and "
            f"environment, {plan.rounds} rounds each, measurements of ≥{plan.min_time_s:g}s, "
            f"garbage collector on); the Pydantic group in {', '.join(settings.apps)}, the "
            f"encoders and the container in {ARMS[shared_arm].environment}'s environment.",
            highlight=False,
        )
        session.begin_measuring()
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
    session.finish(build_micro_results(settings, runs, shared_arm, cpus, note))
    return run_dir
