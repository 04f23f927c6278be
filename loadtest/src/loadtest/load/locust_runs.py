"""One headless locust run as a subprocess, and its figures read back from locust's JSON."""

import json
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from loadtest.lab.errors import LabError
from loadtest.lab.paths import LOADTEST_DIR
from loadtest.lab.processes import start_process, stop_process
from loadtest.load.histograms import merge_histograms

LOCUST = LOADTEST_DIR / ".venv" / "bin" / "locust"
LOCUSTFILES = Path(__file__).resolve().parent / "locustfiles"
# Locust logs this when its own process is CPU-bound: its numbers are then a floor, not a fact.
CPU_WARNING_MARKER = "CPU usage above"
# In-flight requests finish when the time is up, so every acknowledged write is counted.
STOP_TIMEOUT_S = 10


@dataclass
class LocustRun:
    requests: int
    failures: int
    elapsed_s: float
    histogram: dict[int, int]
    cpu_warnings: int
    cpu_percent: float = 0.0  # locust's own CPU over its lifetime, in % of one core
    load_cpus_busy_percent: float | None = None  # how busy the load generator's CPUs were
    files: dict[str, str] = field(default_factory=dict)
    entries: list[dict[str, Any]] = field(default_factory=list)  # locust's per-name stats

    def summary(self) -> dict[str, Any]:
        """What results.json keeps of the load generator itself (the ladder's and the sweep's)."""
        return {
            "cpu_percent": self.cpu_percent,
            "cpu_warnings": self.cpu_warnings,
            "load_cpus_busy_percent": self.load_cpus_busy_percent,
        }

    @property
    def rps(self) -> float:
        """Successful requests per second: failures are flagged, never counted as throughput."""
        return self.acknowledged / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def acknowledged(self) -> int:
        return self.requests - self.failures


def locust_command(
    *,
    host: str,
    users: int,
    duration_s: float,
    output_prefix: Path,
    user_classes: Sequence[str],
    locustfile: Path,
    load_processes: int = 1,
    extra_arguments: Sequence[str] = (),
) -> list[str]:
    command = [
        str(LOCUST),
        "--config",
        str(LOADTEST_DIR / "locust.conf"),
        "--locustfile",
        str(locustfile),
        "--headless",
        "--host",
        host,
        "--users",
        str(users),
        "--spawn-rate",
        str(users * 10),
        "--run-time",
        f"{max(1, round(duration_s))}s",
        "--stop-timeout",
        str(STOP_TIMEOUT_S),
        "--json-file",
        str(output_prefix),
        "--csv",
        str(output_prefix),
        "--html",
        f"{output_prefix}.html",
        "--exit-code-on-error",
        "0",
    ]
    if load_processes > 1:
        command += ["--processes", str(load_processes)]
    return command + list(extra_arguments) + list(user_classes)


def run_locust(
    command: list[str],
    *,
    output_prefix: Path,
    cpus: tuple[int, ...] | None,
    on_tick: Callable[[], None] = lambda: None,
    timeout_s: float,
    boundaries: Sequence[float] = (),
    on_boundary: Callable[[float], None] = lambda _moment: None,
) -> LocustRun:
    """Run locust to the end; `on_boundary(moment)` is called as soon as the wall clock
    (epoch seconds) passes each of `boundaries`, so CPU can be read at window edges."""
    log_path = output_prefix.with_suffix(".log")
    # Children's CPU time, read around this run: locust's own usage, which its log does not
    # always show (its "CPU usage above 90%" warning stayed silent while it was the limit).
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # The whole load side too (locust, PostgreSQL and the runner share these CPUs when pinned).
    cpu_times_before = psutil.cpu_times(percpu=True)
    started = time.monotonic()
    deadline = started + timeout_s
    pending = sorted(boundaries)
    process = None
    try:
        process = start_process(command, log_path=log_path, cpus=cpus, cwd=LOADTEST_DIR)
        while process.poll() is None:
            if time.monotonic() > deadline:
                raise LabError(f"locust did not finish within {timeout_s:.0f}s ({log_path})")
            now = time.time()
            while pending and now >= pending[0]:
                on_boundary(pending.pop(0))
            on_tick()
            time.sleep(min(0.25, max(pending[0] - time.time(), 0.0)) if pending else 0.25)
    finally:
        if process is not None:
            stop_process(process)
    wall_s = time.monotonic() - started
    usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (usage_after.ru_utime - usage_before.ru_utime) + (
        usage_after.ru_stime - usage_before.ru_stime
    )
    json_path = output_prefix.with_suffix(".json")
    if process.returncode != 0 or not json_path.exists():
        last_lines = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["?"]
        raise LabError(f"locust failed (exit {process.returncode}): {last_lines[0]}")
    run = read_locust_json(json_path, log_path)
    if run.requests == 0:
        raise LabError(f"locust recorded no request at all ({log_path})")
    run.cpu_percent = round(100 * cpu_s / wall_s, 1) if wall_s > 0 else 0.0
    if cpus:  # unpinned, "the load side" would include the app itself
        run.load_cpus_busy_percent = busy_percent(
            cpu_times_before, psutil.cpu_times(percpu=True), cpus
        )
    return run


def busy_percent(before: list, after: list, cpus: Sequence[int]) -> float | None:
    """Share of time the given CPUs were not idle between two readings."""
    indexes = list(cpus)
    busy = total = 0.0
    for index in indexes:
        if index >= len(after) or index >= len(before):
            continue
        spent = sum(after[index]) - sum(before[index])
        idle = (after[index].idle + after[index].iowait) - (
            before[index].idle + before[index].iowait
        )
        busy += spent - idle
        total += spent
    return round(100 * busy / total, 1) if total > 0 else None


def read_locust_json(json_path: Path, log_path: Path) -> LocustRun:
    entries = json.loads(json_path.read_text())
    requests = sum(entry["num_requests"] for entry in entries)
    failures = sum(entry["num_failures"] for entry in entries)
    starts = [entry["start_time"] for entry in entries if entry["num_requests"]]
    ends = [entry["last_request_timestamp"] for entry in entries if entry["num_requests"]]
    elapsed = (max(ends) - min(starts)) if starts else 0.0
    histogram = merge_histograms(
        {int(float(key)): count for key, count in entry["response_times"].items()}
        for entry in entries
    )
    log_text = log_path.read_text(errors="replace") if log_path.exists() else ""
    prefix = str(json_path.with_suffix(""))
    files = {
        "json": json_path.name,
        "html": f"{Path(prefix).name}.html",
        "csv_stats": f"{Path(prefix).name}_stats.csv",
        "log": log_path.name,
    }
    return LocustRun(
        requests=requests,
        failures=failures,
        elapsed_s=elapsed,
        histogram=histogram,
        cpu_warnings=log_text.count(CPU_WARNING_MARKER),
        files=files,
        entries=entries,
    )
