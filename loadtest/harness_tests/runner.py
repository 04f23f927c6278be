"""Run the real benchmark runner (`python -m loadtest`, what ./test.sh execs) as a subprocess."""

import os
import uuid
import socket
import subprocess
import sys
from pathlib import Path

import psutil

from loadtest.lab.arms import ARMS

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
# Small enough to finish in about a minute, large enough to exercise every step (start-up
# samples are off here; the end-to-end test turns them on).
TINY_RUN = [
    "--pairs",
    "6",
    "--window",
    "0.5",
    "--warmup",
    "1",
    "--dataset",
    "300",
    "--users",
    "4",
    "--startup-samples",
    "0",
]


# Marks every process a test's runner starts (its children inherit the environment).
RUN_MARK_VARIABLE = "LAB_TEST_RUN_MARK"
RUN_MARK = uuid.uuid4().hex


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def port_options(**fixed: int) -> list[str]:
    """--port-<arm> for every arm: a free port each (or the one given, by arm name with _)."""
    return [
        option
        for arm in ARMS
        for option in (f"--port-{arm}", str(fixed.get(arm.replace("-", "_"), free_port())))
    ]


def only_run(results_dir: Path) -> Path:
    """The one run directory a test's run wrote (results/latest moves for complete runs only)."""
    [run_dir] = [path for path in results_dir.iterdir() if path.is_dir() and not path.is_symlink()]
    return run_dir


def runner_command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "loadtest", *argv]


def runner_environment(**overrides: str) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    environment[RUN_MARK_VARIABLE] = RUN_MARK
    environment.update(overrides)
    return environment


def run_runner(*argv: str, timeout: float = 400, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        runner_command(*argv),
        cwd=REPOSITORY_ROOT,
        env=runner_environment(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def lab_processes() -> set[int]:
    """Processes the runner started for this test session (apps, locust, the trivial server,
    the embedded PostgreSQL, ...): they inherit RUN_MARK from runner_environment, so other
    programs on the machine (another test session, say) are never mistaken for leftovers."""
    found = set()
    for process in psutil.process_iter(["pid"]):
        try:
            marked = process.environ().get(RUN_MARK_VARIABLE) == RUN_MARK
        except psutil.Error:  # gone meanwhile, or not ours to read
            continue
        if marked:
            found.add(process.info["pid"])
    return found
