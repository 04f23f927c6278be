"""`./test.sh profile`: READ synthetic and READ under cProfile in each app (in-process, one
thread: commons/profiling.py), each request's time sorted into buckets a reader knows
(loadtest/profile_buckets.py); the tables, results.json, report.md and the .prof files."""

import json
import os
import subprocess
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from loadtest.apps import arm_python
from loadtest.database import check_configured_url, provide_database
from loadtest.dataset import load_dataset
from loadtest.host import host_facts
from loadtest.pinning import pin_process_tree, plan_pinning
from loadtest.processes import BenchmarkError
from loadtest.profile_buckets import BUCKETS, per_request_us, read_profile
from loadtest.report import markdown_table
from loadtest.results import create_run_dir, write_results
from loadtest.scenarios import SCENARIOS
from loadtest.settings import (
    ARMS,
    PROFILE_REQUESTS,
    QUICK_PROFILE_REQUESTS,
    REPOSITORY_ROOT,
    BenchmarkSettings,
)

PROFILED_SCENARIOS = ("synthetic", "read")
WARMUP_REQUESTS = 50  # per profiled process, before anything is timed


def profile_command(app: str, scenario: str, requests: int, output: Path) -> list[str]:
    return [
        str(arm_python(app)), "-m", "commons.profiling", "--module", ARMS[app].module,
        "--scenario", scenario, "--requests", str(requests), "--warmup", str(WARMUP_REQUESTS),
        "--output", str(output),
    ]  # fmt: skip


def run_one(
    app: str, scenario: str, requests: int, output: Path, database_url: str,
    cpus: tuple[int, ...] | None,
) -> dict[str, Any]:  # fmt: skip
    """Profile one app in one scenario in a fresh process of its own environment; returns the
    summary line it prints."""
    python = arm_python(app)
    if not python.exists():
        raise BenchmarkError(f"{python} is missing; run ./test.sh (it syncs the environments)")
    environment = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    environment["DATABASE_URL"] = database_url
    try:
        finished = subprocess.run(
            profile_command(app, scenario, requests, output),
            cwd=REPOSITORY_ROOT, env=environment, capture_output=True, text=True,
            timeout=120 + requests * 0.2,
            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise BenchmarkError(f"profiling {app} ({scenario}) did not finish in time") from None
    if finished.returncode != 0:
        lines = (finished.stderr.strip() or "no output").splitlines()
        raise BenchmarkError(f"profiling {app} ({scenario}) failed: {lines[-1]}")
    try:
        return json.loads(finished.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise BenchmarkError(f"profiling {app} ({scenario}) printed no summary line") from None


def run_profile(
    settings: BenchmarkSettings, console: Console, *, quick: bool, requests: int | None
) -> Path:
    """Profile every app in READ synthetic and READ; writes results/<timestamp>-profile/ with
    the .prof files, results.json and report.md, prints the tables; returns the directory."""
    check_configured_url()
    count = requests or (QUICK_PROFILE_REQUESTS if quick else PROFILE_REQUESTS)
    started_at = datetime.now(UTC)
    run_dir = create_run_dir(settings.results_dir, started_at, "profile")
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
            f"{settings.dataset_size:,} posts; per app and scenario, {WARMUP_REQUESTS} warm-up "
            f"requests, {count:,} timed without the profiler, {count:,} profiled",
            highlight=False,
        )
        for scenario in PROFILED_SCENARIOS:
            for app in settings.apps:
                console.print(f"  profiling {app} · {SCENARIOS[scenario].label} …",
                              highlight=False)  # fmt: skip
                prof_file = f"{app}-{scenario}.prof"
                summary = run_one(
                    app, scenario, count, run_dir / prof_file, database.url,
                    pinning.app_cpus if pinning.enabled else None,
                )  # fmt: skip
                versions[app] = summary["versions"]
                compiled_pydantic = is_compiled_pydantic_1(summary["versions"])
                bucketed = read_profile(run_dir / prof_file, count, compiled_pydantic)
                profile[scenario][app] = {
                    **bucketed.as_dict(),
                    "unprofiled_us_per_request": per_request_us(summary["unprofiled_s"], count),
                    "prof_file": prof_file,
                }
    results = {
        "kind": "profile",
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
    write_results(run_dir, results)
    (run_dir / "report.md").write_text(report_markdown(results))
    print_profile(results, run_dir, console)
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


def cells(entry: dict[str, Any] | None, bucket: str) -> list[str]:
    if entry is None or bucket not in entry["buckets"]:
        return ["–", "–"]
    figures = entry["buckets"][bucket]
    return [f"{figures['us_per_request']:,.0f}", f"{figures['share']:.1%}"]


def scenario_rows(results: dict[str, Any], scenario: str) -> tuple[list[str], list[list[str]]]:
    apps = results["settings"]["apps"]
    entries = results["profile"][scenario]
    header = ["µs per request", *(f"{app} {column}" for app in apps for column in ("µs", "share"))]
    present = [b for b in BUCKETS if any(b in entries[app]["buckets"] for app in apps)]
    rows = [[BUCKETS[b], *(c for app in apps for c in cells(entries[app], b))] for b in present]
    rows.append(["total under the profiler", *(c for app in apps for c in (
        f"{entries[app]['total_us_per_request']:,.0f}", "100%"))])  # fmt: skip
    rows.append(["the same requests without it", *(c for app in apps for c in (
        f"{entries[app]['unprofiled_us_per_request']:,.0f}", ""))])  # fmt: skip
    rows.append(["function calls seen per request", *(c for app in apps for c in (
        f"{entries[app]['calls_per_request']:,.0f}", ""))])  # fmt: skip
    return header, rows


def top_rows(results: dict[str, Any], scenario: str) -> list[list[str]]:
    return [
        [app, function["function"], f"{function['us_per_request']:,.0f}",
         f"{function['calls_per_request']:,.0f}",
         BUCKETS.get(function["bucket"], "a helper: counted for its callers")]
        for app, entry in results["profile"][scenario].items()
        for function in entry["top_functions"]
    ]  # fmt: skip


def scenario_title(results: dict[str, Any], scenario: str) -> str:
    versions = results["versions"]
    arms = " vs ".join(
        f"{app} (Pydantic {versions[app]['pydantic']}, FastAPI {versions[app]['fastapi']})"
        for app in results["settings"]["apps"]
    )
    return (
        f"{SCENARIOS[scenario].label} (GET {SCENARIOS[scenario].path}) under cProfile — {arms}, "
        f"{results['settings']['requests']:,} requests each"
    )


def print_profile(results: dict[str, Any], run_dir: Path, console: Console) -> None:
    for scenario in PROFILED_SCENARIOS:
        header, rows = scenario_rows(results, scenario)
        table = Table(title=scenario_title(results, scenario))
        for position, column in enumerate(header):
            table.add_column(column, justify="left" if position == 0 else "right")
        for row in rows:
            table.add_row(*row, end_section=row[0] == BUCKETS["harness"])
        console.print(table)
        top = Table(title=f"{SCENARIOS[scenario].label}: the functions with the most own time")
        for column in ("app", "function", "µs/request", "calls/request", "bucket"):
            top.add_column(column, justify="right" if "request" in column else "left")
        for row in top_rows(results, scenario):
            top.add_row(*row)
        console.print(top)
    for note in results["notes"]:
        console.print(f"Note: {note}", highlight=False)
    console.print(how_to_open(run_dir), highlight=False)


def how_to_open(run_dir: Path) -> str:
    example = min(run_dir.glob("*.prof"), default=run_dir / "APP-SCENARIO.prof")
    return (
        f"The .prof files are in {run_dir}: open one with `python3 -m pstats {example}` "
        "(then `sort tottime`, `stats 20`), or draw it with snakeviz, which the lab does not "
        f"install (`.tools/uv/bin/uvx snakeviz -s {example}` fetches it from PyPI)."
    )


def report_markdown(results: dict[str, Any]) -> str:
    parts = [
        "# Where a request's time goes — cProfile, per request\n",
        f"Run {results['started_at'][:19]} → {results['finished_at'][:19]} UTC; "
        f"per app and scenario, {results['settings']['warmup_requests']} warm-up requests, "
        f"then {results['settings']['requests']:,} timed without the profiler and as many "
        "profiled; dataset "
        f"{results['settings']['dataset_size']:,} posts; pinning: "
        f"{results['settings']['pinning']['note']}.\n",
    ]
    for scenario in PROFILED_SCENARIOS:
        header, rows = scenario_rows(results, scenario)
        parts.append(f"## {scenario_title(results, scenario)}\n")
        parts.append(markdown_table(header, rows) + "\n")
        parts.append("The functions with the most own time:\n")
        parts.append(markdown_table(["app", "function", "µs/request", "calls/request", "bucket"],
                                    top_rows(results, scenario)) + "\n")  # fmt: skip
    parts.append("## Notes\n")
    parts += [f"- {note}" for note in results["notes"]]
    files = ", ".join(
        f"`{entry['prof_file']}`"
        for scenario in results["profile"].values()
        for entry in scenario.values()
    )
    parts.append(
        f"\nThe profiles: {files}. Open one with `python3 -m pstats FILE` (then `sort tottime`, "
        "`stats 20`), or with snakeviz (`.tools/uv/bin/uvx snakeviz -s FILE`).\n"
    )
    return "\n".join(parts)
