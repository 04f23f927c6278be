"""`--cross-check`: READ and READ synthetic measured again with wrk, a low-overhead load
generator written in C, in the same paired protocol, so locust's ratios can be checked against
a tool that shares none of its code."""

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from loadtest.lab.apps import RunningApp
from loadtest.lab.arms import rotations
from loadtest.lab.cpu import cpu_seconds_between, read_tree_cpu
from loadtest.lab.errors import LabError
from loadtest.lab.packages import ensure_package
from loadtest.load.scenarios import SCENARIOS
from loadtest.load.settings import PairedLoadSettings
from loadtest.load.windows import WindowRecord

CROSS_CHECK_SCENARIOS = ("read", "synthetic")
WRK_SCRIPT = Path(__file__).resolve().parent / "wrk_summary.lua"


def ensure_wrk() -> str:
    """wrk's version, installing Debian's package when it is missing and this is possible."""
    ensure_package("wrk", "wrk", "--cross-check")
    try:
        answer = subprocess.run(["wrk", "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise LabError(f"--cross-check: wrk does not run: {error}") from None
    first_line = (answer.stdout + answer.stderr).strip().splitlines()[:1] or ["wrk"]
    return first_line[0].split(" [")[0].split(" Copyright")[0]


def wrk_window_s(settings: PairedLoadSettings) -> int:
    return max(1, round(settings.window_s))  # wrk takes whole seconds


def wrk_round_seconds(settings: PairedLoadSettings, arms: int) -> float:
    """Planned seconds of one round of wrk windows (for the progress line)."""
    return arms * (wrk_window_s(settings) + settings.settle_s + 0.1)


def run_wrk(url: str, users: int, seconds: int, cpus: tuple[int, ...] | None) -> dict:
    command = ["wrk", "-t1", f"-c{users}", f"-d{seconds}s", "-s", str(WRK_SCRIPT), url]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=seconds + 30,
            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
        )
    except subprocess.TimeoutExpired:
        raise LabError(f"wrk did not finish a {seconds}s window against {url}") from None
    summary = next((line for line in done.stdout.splitlines() if line.startswith("{")), None)
    try:
        return json.loads(summary or "")
    except ValueError:
        reason = (done.stderr.strip() or done.stdout.strip() or "?").splitlines()[-1]
        raise LabError(f"wrk failed against {url}: {reason}") from None


def cross_check_scenario(
    settings: PairedLoadSettings,
    name: str,
    repeat: int,
    apps: dict[str, RunningApp],
    load_cpus: tuple[int, ...] | None,
    app_cpu_capacity: float,
    on_window: Callable[[], None] = lambda: None,
) -> list[WindowRecord]:
    """Alternating wrk windows, rounds in rotating order as in the locust run."""
    seconds = wrk_window_s(settings)
    records: list[WindowRecord] = []
    for round_, arms in enumerate(rotations(tuple(apps), settings.pairs)):
        for arm in arms:
            app = apps[arm]
            time.sleep(settings.settle_s)  # the previous arm's abandoned requests drain
            cpu_before, started = read_tree_cpu(app.pid) if app.pid else None, time.time()
            summary = run_wrk(
                app.base_url + SCENARIOS[name].path, settings.users, seconds, load_cpus
            )
            span = time.time() - started
            app_cpu = (
                cpu_seconds_between(cpu_before, read_tree_cpu(app.pid))
                if cpu_before is not None and app.pid
                else None
            )
            failures = summary["status_errors"] + summary["socket_errors"]
            records.append(
                WindowRecord(
                    repeat=repeat,
                    scenario=name,
                    slot=arm,
                    window=len(records),
                    round=round_,
                    started_at=started,
                    duration_s=summary["duration_us"] / 1e6,
                    requests=summary["requests"],
                    failures=min(failures, summary["requests"]),
                    histogram={},
                    app_cpu_s=app_cpu,
                    cpu_span_s=span,
                    app_cpu_capacity=app_cpu_capacity,
                )
            )
            on_window()
    return records
