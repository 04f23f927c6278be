"""`./test.sh profile`: READ synthetic and READ under cProfile in each app (in-process, one
thread: commons/probes/profiling.py), each request's time sorted into buckets a reader knows
(buckets.py); the tables, results.json, report.md and the .prof files."""

import json
import os
import subprocess
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.lab.arms import ARMS, arm_python
from loadtest.lab.database import check_configured_url, provide_database
from loadtest.lab.dataset import load_dataset
from loadtest.lab.errors import LabError
from loadtest.lab.host import host_facts
from loadtest.lab.paths import REPOSITORY_ROOT
from loadtest.lab.pinning import pin_process_tree, plan_pinning
from loadtest.lab.processes import child_environment
from loadtest.load.scenarios import SCENARIOS
from loadtest.modes.profile.buckets import BUCKETS, per_request_us, read_profile
from loadtest.modes.profile.report import (
    PROFILED_SCENARIOS,
    how_to_open,
    print_report,
    write_reports,
)
from loadtest.modes.profile.settings import ProfileSettings
from loadtest.output.results_file import write_results
from loadtest.output.run_folder import run_folder

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
    started_at = datetime.now(UTC)
    with run_folder(settings.results_dir, started_at, KIND) as folder:
        run_dir = folder.path
        host = host_facts()
        pinning = plan_pinning(settings.pin)
        console.print(f"Results go to {run_dir}", highlight=False)
        pinning_note = pinning.note.replace("locust, PostgreSQL and the runner", "PostgreSQL")
        console.print(f"Pinning: {pinning_note}", highlight=False)
        profile: dict[str, dict[str, Any]] = {scenario: {} for scenario in PROFILED_SCENARIOS}
        versions: dict[str, Any] = {}
        with ExitStack() as stack:
            database = provide_database(stack)
            if database.server_pid and pinning.enabled:
                pin_process_tree(database.server_pid, pinning.load_cpus)
            load_dataset(database.url, settings.dataset_size)
            console.print(
                f"PostgreSQL {database.server_version} ({database.kind}); dataset: "
                f"{settings.dataset_size:,} posts; per app and scenario, {WARMUP_REQUESTS} "
                f"warm-up requests, {count:,} timed without the profiler, {count:,} profiled",
                highlight=False,
            )
            folder.begin_measuring()
            for scenario in PROFILED_SCENARIOS:
                for app in settings.apps:
                    console.print(
                        f"  profiling {app} · {SCENARIOS[scenario].label} …", highlight=False
                    )
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
    results = {
        "started_at": started_at.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "host": host,
        "settings": {
            "apps": list(settings.apps),
            "scenarios": {name: SCENARIOS[name].path for name in PROFILED_SCENARIOS},
            "requests": count,
            "warmup_requests": WARMUP_REQUESTS,
            "dataset_size": settings.dataset_size,
            "pinning": pinning.as_dict(),
            "database": {"kind": database.kind, "server_version": database.server_version},
        },
        "versions": versions,
        "buckets": BUCKETS,
        "notes": NOTES,
        "profile": profile,
    }
    document = write_results(run_dir, KIND, results)
    write_reports(run_dir, document)
    print_report(document, console)
    console.print(how_to_open(run_dir), highlight=False)
    return run_dir


def is_compiled_pydantic_1(versions: dict[str, Any]) -> bool:
    return str(versions.get("pydantic", "")).startswith("1.") and bool(
        versions.get("pydantic_compiled")
    )


NOTES = [
    "Times are wall-clock time in the profiled thread (cProfile's clock): the database's round "
    "trips include PostgreSQL's own time, and a busy machine (other programs on the same "
    "CPUs) stretches every figure.",
    "Under the profiler every function call it sees costs extra, so the totals are inflated "
    "(compare the row without the profiler), and call-heavy Python code (jsonable_encoder) "
    "more than compiled code (pydantic-core, compiled Pydantic 1, whose inner calls it does "
    "not see): read the shares, not the µs, and expect v1's FastAPI encoding share to be "
    "overstated and its compiled Pydantic share understated.",
    "What differs from the served app: requests are driven in-process as ASGI calls, one at a "
    "time, through the whole middleware stack, with no HTTP server or client; and FastAPI's "
    "sync routes, dependencies and response validation run inline on the event loop's thread "
    "(anyio.to_thread.run_sync is patched), because cProfile sees only its own thread. The "
    "served app pays for a thread hop there instead.",
    "Pydantic 1.10 is Cython-compiled: cProfile cannot see into it, so its time is the own "
    "time of the functions that call it — FastAPI's _model_dump (model.dict()) and "
    "_validate_value_with_model_field (query parameters), and the harness's "
    "call_compiled_pydantic (response validation) — counted as 'Pydantic 1, compiled'. "
    "Python code it calls back (the app's @validator) is visible and counts as the app's. "
    "Other brief calls of FastAPI into compiled Pydantic (attribute reads of its ModelField) "
    "stay in FastAPI's buckets.",
    "Helpers count where they are called from: built-in C functions not named after a library, "
    "the standard library (but json) and fastapi/_compat/, split by pstats' caller edges.",
]
