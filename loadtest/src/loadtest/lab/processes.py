"""Child processes the runner owns: started in their own session, always torn down, with
whatever they started, also in a session of its own, or left behind by a parent that exited."""

import os
import signal
import socket
import subprocess
import threading
import uuid
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from loadtest.lab.errors import LabError
from loadtest.lab.process_tree import descendants

# Each process start_process starts carries a token of its own in its environment, which
# everything it starts inherits: stop_process finds by it what escaped the process group and
# the tree (a daemon's double fork, whose parent has exited), without a cgroup.
TOKEN_VARIABLE = "LAB_PROCESS_TOKEN"
_tokens: "weakref.WeakKeyDictionary[subprocess.Popen[bytes], str]" = weakref.WeakKeyDictionary()


def ensure_port_free(port: int, what: str, remedy: str = "or pick another port") -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As uvicorn does: connections left in TIME_WAIT by an earlier run do not block a bind.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            raise LabError(
                f"port {port} (for {what}) is already in use; stop whatever listens there "
                f"(an earlier ./test.sh? ./test.sh clean stops what a killed run left) {remedy}"
            ) from None


def find_free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def child_environment(**overrides: str) -> dict[str, str]:
    """This process's environment for a child in an environment of its own: without
    VIRTUAL_ENV, which would name the harness's."""
    environment = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    return environment | overrides


HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # what tears a run down (cli.py)


@contextmanager
def interrupts_held() -> Iterator[list[int]]:
    """Ctrl-C, SIGTERM and SIGHUP held back for the block: the main thread's handlers only
    record them, in the list it yields. While Popen waits for its child to exec, the runner's
    teardown would lose the child (a started process nobody holds). A signal being ignored stays
    ignored; other threads cannot set handlers, so there the block runs as is."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def hold(signal_number: int, _frame: Any) -> None:
        received.append(signal_number)

    previous = {number: signal.getsignal(number) for number in HELD_SIGNALS}
    for number, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(number, hold)
    try:
        yield received
    finally:
        for number, handler in previous.items():
            if handler is not signal.SIG_IGN:
                signal.signal(number, handler)


def start_process(
    command: Sequence[str],
    *,
    log_path: Path,
    cpus: tuple[int, ...] | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    cgroup_procs: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start `command` in a new session (Ctrl-C reaches only the runner, which then cleans up),
    inside the cgroup whose `cgroup.procs` is `cgroup_procs`, if given (lab/cgroup.py)."""
    executable = command[0]
    if not Path(executable).exists():
        raise LabError(f"{executable} is missing; run ./test.sh (it syncs the environments)")

    def pin_to_cpus() -> None:
        # The cgroup first: on cgroup v2 with cpuset, kernels before 6.2 reset a task's CPUs to
        # its new cgroup's as it moves in, which would undo the pinning.
        if cgroup_procs is not None:
            cgroup_procs.write_text(str(os.getpid()))
        if cpus:
            os.sched_setaffinity(0, cpus)

    log_path.parent.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex
    env = {**(os.environ if env is None else env), TOKEN_VARIABLE: token}
    with log_path.open("ab") as log_file, interrupts_held() as interrupted:
        try:
            process = subprocess.Popen(
                list(command),
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                # Popen's default, said out loud: ./test.sh's run lock (its file descriptor 9,
                # scripts/one_run_at_a_time.sh) must end with the runner, not live on in an app
                # or a locust that outlived a killed run and keep the machine locked.
                close_fds=True,
                preexec_fn=pin_to_cpus,
                env=env,
                cwd=cwd,
            )
        except subprocess.SubprocessError as error:  # pin_to_cpus failed in the child
            raise LabError(
                f"cannot start {Path(executable).name} on CPUs {cpus} in cgroup "
                f"{cgroup_procs}: {error}"
            ) from None

    _tokens[process] = token
    if interrupted:  # Ctrl-C (or a kill) came while it started: stopped here, not left behind
        stop_process(process)
        signal.raise_signal(interrupted[0])  # now to the handler it was meant for
    return process


def kill_all(processes: list[psutil.Process]) -> None:
    """SIGKILL each one still alive (psutil checks it is the same process, not a reused PID),
    then wait until they are gone."""
    for process in processes:
        try:
            process.kill()
        except psutil.Error:
            continue
    psutil.wait_procs(processes, timeout=5)


def carrying(token: str) -> list[psutil.Process]:
    """Every process whose environment holds `token` (those of other users cannot be read, and
    are not the runner's)."""
    found = []
    for candidate in psutil.process_iter():
        if candidate.pid == os.getpid():
            continue
        try:
            if candidate.environ().get(TOKEN_VARIABLE) == token:
                found.append(candidate)
        except psutil.Error:
            continue
    return found


def escaped(process: subprocess.Popen[bytes]) -> list[psutil.Process]:
    """What still carries the token of `process`, a process start_process started: asked once,
    as it is stopped (its token is forgotten)."""
    token = _tokens.pop(process, None)
    return carrying(token) if token is not None else []


def stop_process(process: subprocess.Popen[bytes], timeout_s: float = 15) -> None:
    """SIGTERM the whole process group, then SIGKILL whatever is left, every process below it
    when it was asked to stop, even one in a session of its own (which the group's signal
    misses: issue 53), and every process still carrying its token: an orphan whose parent had
    already exited (issue 53), found by its environment."""
    if process.returncode is not None:  # reaped already: its process id may be another's now
        kill_all(escaped(process))
        return
    started = descendants(process.pid)
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)  # stragglers (workers) of a finished leader
    except (ProcessLookupError, PermissionError):
        pass
    if process.poll() is None:
        process.wait()
    kill_all(started + escaped(process))
