"""`./test.sh profile`: READ synthetic and READ under cProfile in each app (in-process, one
thread: commons/probes/profiling.py), each request's time sorted into buckets a reader knows
(buckets.py); the tables, results.json, report.md and the .prof files."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.lab.arms import ARMS, arm_python
from loadtest.lab.database import check_configured_url
from loadtest.lab.dataset import load_dataset
from loadtest.lab.errors import LabError
from loadtest.lab.paths import REPOSITORY_ROOT
from loadtest.lab.processes import child_environment
from loadtest.load.scenarios import SCENARIOS
from loadtest.modes.profile.buckets import per_request_us, read_profile
from loadtest.modes.profile.report import how_to_open
from loadtest.modes.profile.results import build_profile_results
from loadtest.modes.profile.settings import PROFILED_SCENARIOS, ProfileSettings
from loadtest.modes.session import open_session

KIND = "profile"
WARMUP_REQUESTS = 50  # per profiled process, before anything is timed


def profile_command(app: str, scenario: str, requests: int, output: Path) -> list[str]:
    return [
        str(arm_python(app)),
        "-m",
        "commons.probes.profiling",
        "--module",
        ARMS[app].module,
        "--scenario",
        scenario,
        "--requests",
        str(requests),
        "--warmup",
        str(WARMUP_REQUESTS),
        "--output",
        str(output),
    ]


def run_one(
    app: str,
    scenario: str,
    requests: int,
    output: Path,
    database_url: str,
    cpus: tuple[int, ...] | None,
) -> dict[str, Any]:
    """Profile one app in one scenario in a fresh process of its own environment; returns the
    summary line it prints."""
    python = arm_python(app)
    if not python.exists():
        raise LabError(f"{python} is missing; run ./test.sh (it syncs the environments)")
    try:
        finished = subprocess.run(
            profile_command(app, scenario, requests, output),
            cwd=REPOSITORY_ROOT,
            env=child_environment(DATABASE_URL=database_url),
            capture_output=True,
            text=True,
            timeout=120 + requests * 0.2,
            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
        )
    except subprocess.TimeoutExpired:
        raise LabError(f"profiling {app} ({scenario}) did not finish in time") from None
    if finished.returncode != 0:
        lines = (finished.stderr.strip() or "no output").splitlines()
        raise LabError(f"profiling {app} ({scenario}) failed: {lines[-1]}")
    try:
        return json.loads(finished.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise LabError(f"profiling {app} ({scenario}) printed no summary line") from None


def run_profile(settings: ProfileSettings, console: Console) -> Path:
    """Profile every app in READ synthetic and READ; writes results/<timestamp>-profile/ with
    the .prof files, results.json and report.md, prints the tables; returns the directory."""
    check_configured_url()
    count = settings.requests
    with open_session(KIND, settings.results_dir, console) as session:
        run_dir = session.run_dir
        # The profiled process on the apps' CPUs; PostgreSQL on the other half.
        session.pin(settings.pin, load_side=("PostgreSQL",))
        profile: dict[str, dict[str, Any]] = {scenario: {} for scenario in PROFILED_SCENARIOS}
        versions: dict[str, Any] = {}
        database = session.start_database()
        pinning = session.pinning
        load_dataset(database.url, settings.dataset_size)
        console.print(
            f"PostgreSQL {database.server_version} ({database.kind}); dataset: "
            f"{settings.dataset_size:,} posts; per app and scenario, {WARMUP_REQUESTS} "
            f"warm-up requests, {count:,} timed without the profiler, {count:,} profiled",
            highlight=False,
        )
        session.begin_measuring()
        for scenario in PROFILED_SCENARIOS:
            for app in settings.apps:
                console.print(f"  profiling {app} · {SCENARIOS[scenario].label} …", highlight=False)
                prof_file = f"{app}-{scenario}.prof"
                summary = run_one(
                    app,
                    scenario,
                    count,
                    run_dir / prof_file,
                    database.url,
                    pinning.app_cpus if pinning.enabled else None,
                )
                versions[app] = summary["versions"]
                compiled_pydantic = is_compiled_pydantic_1(summary["versions"])
                bucketed = read_profile(run_dir / prof_file, count, compiled_pydantic)
                profile[scenario][app] = {
                    **bucketed.as_dict(),
                    "unprofiled_us_per_request": per_request_us(summary["unprofiled_s"], count),
                    "prof_file": prof_file,
                }
    session.finish(
        build_profile_results(settings, WARMUP_REQUESTS, database, pinning, versions, profile)
    )
    console.print(how_to_open(run_dir), highlight=False)
    return run_dir


def is_compiled_pydantic_1(versions: dict[str, Any]) -> bool:
    return str(versions.get("pydantic", "")).startswith("1.") and bool(
        versions.get("pydantic_compiled")
    )
