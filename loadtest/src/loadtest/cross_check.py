"""`--cross-check`: READ and READ synthetic measured again with wrk, a low-overhead load
generator written in C, in the same paired protocol, so locust's ratios can be checked against
a tool that shares none of its code."""

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable

from loadtest.apps import RunningApp
from loadtest.cpu import cpu_seconds_between, read_tree_cpu
from loadtest.locust_runs import LOADTEST_DIR
from loadtest.processes import BenchmarkError
from loadtest.scenarios import SCENARIOS
from loadtest.schedule import balanced_rounds
from loadtest.settings import BenchmarkSettings
from loadtest.windows import WindowRecord

CROSS_CHECK_SCENARIOS = ("read", "synthetic")
WRK_SCRIPT = LOADTEST_DIR / "src" / "loadtest" / "wrk_summary.lua"
# The two tools' ratios should agree to within this share of locust's.
AGREEMENT_LIMIT = 0.10


def ensure_wrk() -> str:
    """wrk's version, installing Debian's package when it is missing and this is possible."""
    if shutil.which("wrk") is None:
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            raise BenchmarkError("--cross-check needs wrk, which is not installed; install it "
                                 "(Debian/Ubuntu: apt-get install wrk) and retry")  # fmt: skip
        environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "wrk"]):
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                                      env=environment)  # fmt: skip
            except subprocess.TimeoutExpired:
                raise BenchmarkError(f"--cross-check: `{' '.join(command)}` timed out") from None
            if done.returncode != 0:
                reason = (done.stderr.strip().splitlines() or ["?"])[-1]
                raise BenchmarkError(f"--cross-check needs wrk and `{' '.join(command)}` failed: "
                                     f"{reason}")  # fmt: skip
    try:
        answer = subprocess.run(["wrk", "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BenchmarkError(f"--cross-check: wrk does not run: {error}") from None
    first_line = (answer.stdout + answer.stderr).strip().splitlines()[:1] or ["wrk"]
    return first_line[0].split(" [")[0].split(" Copyright")[0]


def wrk_window_s(settings: BenchmarkSettings) -> int:
    return max(1, round(settings.window_s))  # wrk takes whole seconds


def cross_check_seconds(settings: BenchmarkSettings, name: str, arms: int | None = None) -> float:
    """Planned seconds of one scenario's cross-check (every repeat unless `arms` is given: then
    one repeat with that many arms)."""
    if name not in settings.scenarios:
        return 0.0
    per_window = wrk_window_s(settings) + settings.settle_s + 0.1
    repeats = 1 if arms is not None else settings.repeats
    return repeats * (arms or len(settings.apps)) * settings.pairs * per_window


def run_wrk(url: str, users: int, seconds: int, cpus: tuple[int, ...] | None) -> dict:
    command = ["wrk", "-t1", f"-c{users}", f"-d{seconds}s", "-s", str(WRK_SCRIPT), url]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=seconds + 30,
            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise BenchmarkError(f"wrk did not finish a {seconds}s window against {url}") from None
    summary = next((line for line in done.stdout.splitlines() if line.startswith("{")), None)
    try:
        return json.loads(summary or "")
    except ValueError:
        reason = (done.stderr.strip() or done.stdout.strip() or "?").splitlines()[-1]
        raise BenchmarkError(f"wrk failed against {url}: {reason}") from None


def cross_check_scenario(
    settings: BenchmarkSettings,
    name: str,
    repeat: int,
    apps: dict[str, RunningApp],
    load_cpus: tuple[int, ...] | None,
    app_cpu_capacity: float,
    on_window: Callable[[], None] = lambda: None,
) -> list[WindowRecord]:
    """Alternating wrk windows, rounds in rotating order as in the locust run."""
    seconds = wrk_window_s(settings)
    records = []
    for round_, arms in enumerate(balanced_rounds(tuple(apps), settings.pairs)):
        for arm in arms:
            app = apps[arm]
            time.sleep(settings.settle_s)  # the previous arm's abandoned requests drain
            cpu_before, started = read_tree_cpu(app.pid) if app.pid else None, time.time()
            summary = run_wrk(app.base_url + SCENARIOS[name].path, settings.users, seconds,
                              load_cpus)  # fmt: skip
            span = time.time() - started
            app_cpu = (cpu_seconds_between(cpu_before, read_tree_cpu(app.pid))
                       if cpu_before is not None and app.pid else None)  # fmt: skip
            failures = summary["status_errors"] + summary["socket_errors"]
            records.append(
                WindowRecord(
                    repeat=repeat,
                    scenario=name,
                    arm=arm,
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
                )  # fmt: skip
            )
            on_window()
    return records
