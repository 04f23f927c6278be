"""Run the real benchmark runner (`python -m loadtest`, what ./test.sh execs) as a subprocess."""

import contextlib
import io
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil

from loadtest.cli import main
from loadtest.lab.arms import ARMS
from loadtest.lab.leftovers import LOCK_VARIABLE

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
# Small enough to finish in about a minute, large enough to exercise every step (start-up
# samples are off here; the end-to-end test turns them on). One user: a window still gets tens
# of requests, and the run keeps about one CPU busy, not two, beside the other tests.
TINY_RUN = [
    "--pairs",
    "6",
    "--window",
    "0.4",
    "--warmup",
    "1",
    "--dataset",
    "300",
    "--users",
    "1",
    "--startup-samples",
    "0",
]


# Marks every process a test's runner starts (its children inherit the environment).
RUN_MARK_VARIABLE = "LAB_TEST_RUN_MARK"
RUN_MARK = uuid.uuid4().hex


# Ports the tests hand out: below the kernel's ephemeral range (32768 on, where the runner's own
# calibration server and every client socket get theirs), a block of its own per pytest-xdist
# worker, so parallel tests never pick the same port.
PORTS_FROM, PORTS_PER_WORKER = 20_000, 1_000


# This process's turn through its block, in a random order: two calls never hand out the same
# port until the block is used up (two draws at random met once in CI, and the run refused the
# file whose two arms had the same port).
_PORT_TURN: list[int] = []


def free_port() -> int:
    """A port nothing listens on, not handed out before by this process (until its block of
    PORTS_PER_WORKER is used up, then round again)."""
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    first = PORTS_FROM + (worker % 6) * PORTS_PER_WORKER
    for _ in range(PORTS_PER_WORKER):
        if not _PORT_TURN:
            _PORT_TURN.extend(
                random.sample(range(first, first + PORTS_PER_WORKER), PORTS_PER_WORKER)
            )
        port = _PORT_TURN.pop()
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {first}-{first + PORTS_PER_WORKER - 1}")


def port_options(**fixed: int) -> list[str]:
    """--port-<arm> for every arm: a free port each, no two alike (or the one given, by arm
    name with _)."""
    ports = {arm: fixed.get(arm.replace("-", "_")) or free_port() for arm in ARMS}
    return [option for arm, port in ports.items() for option in (f"--port-{arm}", str(port))]


def only_run(results_dir: Path) -> Path:
    """The one run directory a test's run wrote (results/latest moves for complete runs only)."""
    [run_dir] = [path for path in results_dir.iterdir() if path.is_dir() and not path.is_symlink()]
    return run_dir


def runner_command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "loadtest", *argv]


def runner_environment(**overrides: str) -> dict[str, str]:
    """The test's environment for a run: marked as this session's (RUN_MARK), with a run lock of
    its own (unless the test names one), so a run another test killed outright is never this
    run's leftover: its note would be a second line on a one-line error."""
    environment = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    environment[RUN_MARK_VARIABLE] = RUN_MARK
    environment[LOCK_VARIABLE] = str(
        Path(tempfile.gettempdir(), f"lab-test-{uuid.uuid4().hex}.lock")
    )
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


@contextlib.contextmanager
def environment_of_a_run(overrides: dict[str, str]) -> Iterator[None]:
    """os.environ as runner_environment(**overrides) makes it, for the length of the block."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(runner_environment(**overrides))
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


TEARDOWN_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # what main() takes over


def run_in_process(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """What run_runner answers, from the runner's main() called in this process: for the runs
    that end before they start anything (option errors, refusals, report rebuilding), which a
    subprocess would only make slower (each costs a second of imports). The signal handlers main
    sets are put back."""
    stdout, stderr = io.StringIO(), io.StringIO()
    handlers = {number: signal.getsignal(number) for number in TEARDOWN_SIGNALS}
    with environment_of_a_run(env), contextlib.chdir(REPOSITORY_ROOT):
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                status = main(list(argv))
            except SystemExit as exit_:  # argparse's exits, --help
                status = exit_.code if isinstance(exit_.code, int) else 1
            finally:
                for number, handler in handlers.items():
                    signal.signal(number, handler)
    return subprocess.CompletedProcess(
        runner_command(*argv), status, stdout.getvalue(), stderr.getvalue()
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


# Time for a process the runner has already stopped to finish exiting (PostgreSQL's backends
# after their postmaster, a uvicorn worker after its parent): an orphan outlives it.
EXIT_GRACE_S = 10


def leftover_processes(before: set[int]) -> dict[int, str]:
    """The lab processes started since `before` that are still alive after EXIT_GRACE_S, with
    their command lines (what an assertion should show)."""
    deadline = time.monotonic() + EXIT_GRACE_S
    while (new := lab_processes() - before) and time.monotonic() < deadline:
        time.sleep(0.2)
    described = {}
    for pid in new:
        try:
            process = psutil.Process(pid)
            described[pid] = f"{process.status()}: {' '.join(process.cmdline())[:200]}"
        except psutil.Error:
            continue  # gone meanwhile
    return described


def started_a_process(pid: int, fragment: str) -> bool:
    """Whether the process `pid` has a descendant whose command line holds `fragment` by now."""
    for child in psutil.Process(pid).children(recursive=True):
        try:
            if fragment in " ".join(child.cmdline()):
                return True
        except psutil.Error:  # gone meanwhile
            continue
    return False


def interrupted_run(*argv: str, once_started: str, within_s: float = 90) -> tuple[int, str]:
    """The runner started with `argv`, sent Ctrl-C (SIGINT) as soon as it has started a process
    whose command line holds `once_started`: its exit status and what it wrote to stderr."""
    runner = subprocess.Popen(
        runner_command(*argv),
        cwd=REPOSITORY_ROOT,
        env=runner_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + within_s
    while not started_a_process(runner.pid, once_started):
        assert runner.poll() is None, runner.communicate()[1]
        assert time.monotonic() < deadline, f"nothing like {once_started!r} within {within_s} s"
        time.sleep(0.05)
    runner.send_signal(signal.SIGINT)
    _, stderr = runner.communicate(timeout=60)
    return runner.returncode, stderr
