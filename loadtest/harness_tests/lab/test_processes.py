"""A Ctrl-C while a child starts: held back until the child is held, then the child is stopped
and the interrupt goes on (it used to lose the child while Popen waited for it to exec)."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from loadtest.lab import processes
from loadtest.lab.processes import interrupts_held, start_process


def test_an_interrupt_in_the_block_is_recorded_not_raised() -> None:
    with interrupts_held() as interrupted:
        os.kill(os.getpid(), signal.SIGINT)
    assert interrupted == [True]
    with pytest.raises(KeyboardInterrupt):  # the handler before the block is back
        os.kill(os.getpid(), signal.SIGINT)
        signal.sigtimedwait([], 0.5)  # let the handler run


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
    with pytest.raises(KeyboardInterrupt):
        start_process(
            [sys.executable, "-c", "import time; time.sleep(60)"], log_path=tmp_path / "log"
        )
    [child] = started
    assert child.poll() is not None  # stopped, not left running
