"""A Ctrl-C while a child starts: held back until the child is held, then the child is stopped
and the interrupt goes on (it used to lose the child while Popen waited for it to exec)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from loadtest.lab import processes
from loadtest.lab.processes import interrupts_held, start_process


def test_an_interrupt_in_the_block_is_recorded_not_raised() -> None:
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as the runner has it
    try:
        with interrupts_held() as interrupted:
            os.kill(os.getpid(), signal.SIGINT)
        assert interrupted == [signal.SIGINT]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # back after it
    finally:
        signal.signal(signal.SIGINT, before)


def test_an_ignored_signal_stays_ignored() -> None:
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a background job's Ctrl-C
    try:
        with interrupts_held() as interrupted:
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
        assert interrupted == []
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_child_started_during_ctrl_c_is_stopped_and_the_interrupt_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[subprocess.Popen[bytes]] = []
    real_popen = subprocess.Popen

    def popen_then_ctrl_c(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        child = real_popen(*args, **kwargs)  # type: ignore[call-overload]
        started.append(child)
        os.kill(os.getpid(), signal.SIGINT)  # as if Ctrl-C came while Popen still waited
        return child

    monkeypatch.setattr(processes.subprocess, "Popen", popen_then_ctrl_c)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # pytest-xdist may ignore it
    try:
        with pytest.raises(KeyboardInterrupt):
            start_process(
                [sys.executable, "-c", "import time; time.sleep(60)"], log_path=tmp_path / "log"
            )
    finally:
        signal.signal(signal.SIGINT, before)
    [child] = started
    assert child.poll() is not None  # stopped, not left running


def wait_for_pid(path: Path) -> int:
    for _ in range(200):
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never named a process")


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_child_in_a_session_of_its_own_is_stopped_with_its_parent(tmp_path: Path) -> None:
    """Issue 53: an arm whose command starts a child with a new session (setsid, a daemon)
    left it running after the run: the signal to the arm's process group missed it."""
    pid_file = tmp_path / "escapee.pid"
    arm = start_process(
        ["/bin/bash", "-c", f"setsid sleep 300 & echo $! > {pid_file}; sleep 300"],
        log_path=tmp_path / "arm.log",
    )
    escapee = wait_for_pid(pid_file)
    for _ in range(200):  # setsid runs a moment after the shell wrote its process id
        if os.getsid(escapee) != os.getsid(arm.pid):
            break
        time.sleep(0.05)
    assert os.getsid(escapee) != os.getsid(arm.pid)  # out of the arm's session and group
    processes.stop_process(arm)
    assert not alive(escapee)


def test_an_orphan_whose_parent_exited_is_stopped_with_the_arm(tmp_path: Path) -> None:
    """Issue 53: a daemon's double fork. The subshell starts a child in a session of its own
    and exits, so the child is no longer below the arm, nor in its process group, when the arm
    is stopped; it still carries the arm's token in its environment."""
    pid_file = tmp_path / "orphan.pid"
    arm = start_process(
        ["/bin/bash", "-c", f"( setsid sleep 300 & echo $! > {pid_file} ); sleep 300"],
        log_path=tmp_path / "arm.log",
    )
    orphan = wait_for_pid(pid_file)
    for _ in range(200):  # setsid runs a moment after the subshell wrote its process id
        if os.getsid(orphan) != os.getsid(arm.pid):
            break
        time.sleep(0.05)
    assert os.getsid(orphan) != os.getsid(arm.pid)
    assert orphan not in {child.pid for child in psutil.Process(arm.pid).children(recursive=True)}
    processes.stop_process(arm)
    assert not alive(orphan)


def test_only_the_stopped_arms_processes_are_stopped(tmp_path: Path) -> None:
    """The token is the arm's own: stopping one arm leaves another's escaped child alone."""
    pid_files = [tmp_path / "first.pid", tmp_path / "second.pid"]
    arms = [
        start_process(
            ["/bin/bash", "-c", f"( setsid sleep 300 & echo $! > {pid_file} ); sleep 300"],
            log_path=tmp_path / f"{pid_file.stem}.log",
        )
        for pid_file in pid_files
    ]
    first, second = (wait_for_pid(pid_file) for pid_file in pid_files)
    try:
        processes.stop_process(arms[0])
        assert not alive(first) and alive(second)
    finally:
        processes.stop_process(arms[1])
    assert not alive(second)
