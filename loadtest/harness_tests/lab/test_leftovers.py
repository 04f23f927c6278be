"""What a runner killed outright leaves (lab/leftovers.py): found by its mark and its lock,
stopped, its embedded PostgreSQL's data folder removed; a live run's processes and another
lock's are not leftovers. (test_one_run_at_a_time.py kills a real ./test.sh run and cleans up
after it with `./test.sh clean`.)"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from loadtest.lab.leftovers import LOCK_VARIABLE, data_folders_of, find_leftovers, stop_leftovers

# A runner in miniature: marks itself as ./test.sh's runner does, starts the embedded
# PostgreSQL (whose postmaster detaches, as pg_ctl's do), says where, and is killed outright.
KILLED_RUNNER = """
import os, signal, sys
from commons.embedded_postgres import start_embedded_postgres
from loadtest.lab.leftovers import mark_this_run

mark_this_run()
database = start_embedded_postgres()
print(database.data_dir, database.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_runners_postgresql_is_found_stopped_and_its_folder_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = str(tmp_path / "own.lock")
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_RUNNER],
        env={**os.environ, LOCK_VARIABLE: lock},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    data_dir, postmaster = killed.stdout.split()
    try:
        monkeypatch.setenv(LOCK_VARIABLE, str(tmp_path / "another.lock"))
        assert not find_leftovers()  # another lock's run: not this one's to clean
        monkeypatch.setenv(LOCK_VARIABLE, lock)
        leftovers = find_leftovers()
        assert int(postmaster) in {process.pid for process in leftovers.processes}
        assert leftovers.data_folders == (Path(data_dir),)
        assert "postgres" in leftovers.summary()
        assert stop_leftovers(leftovers) == [Path(data_dir)]
        assert not Path(data_dir).exists() and not psutil.pid_exists(int(postmaster))
        assert not find_leftovers()
    finally:
        if psutil.pid_exists(int(postmaster)):
            os.kill(int(postmaster), signal.SIGKILL)


def test_a_live_runners_processes_are_not_leftovers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = str(tmp_path / "own.lock")
    monkeypatch.setenv(LOCK_VARIABLE, lock)
    alive = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, time\n"
            "from loadtest.lab.leftovers import mark_this_run\n"
            "mark_this_run()\n"
            "subprocess.Popen(['sleep', '60'])\n"
            "time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        for _ in range(100):
            if psutil.Process(alive.pid).children():
                break
            time.sleep(0.05)
        assert psutil.Process(alive.pid).children()
        assert not find_leftovers()
    finally:
        for child in psutil.Process(alive.pid).children():
            child.kill()
        alive.kill()
        alive.wait()


def test_only_the_labs_own_data_folders_are_named() -> None:
    assert data_folders_of(["postgres", "-D", "/tmp/pglab-x1"]) == {Path("/tmp/pglab-x1")}
    assert data_folders_of(["postgres", "-D", "/var/lib/postgresql/18/main"]) == set()


def test_a_marked_process_the_lab_does_not_start_is_not_a_leftover(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A helper some tool left running (an ssh master, a credential helper) inherits the mark
    of the run it was started under; it is not the lab's to stop."""
    lock = str(tmp_path / "own.lock")
    killed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, signal, subprocess\n"
            "from loadtest.lab.leftovers import mark_this_run\n"
            "mark_this_run()\n"
            "helper = subprocess.Popen(['sleep', '60'], start_new_session=True,"
            " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "print(helper.pid, flush=True)\n"
            "os.kill(os.getpid(), signal.SIGKILL)",
        ],
        env={**os.environ, LOCK_VARIABLE: lock},
        capture_output=True,
        text=True,
        timeout=60,
    )
    helper = int(killed.stdout)
    try:
        monkeypatch.setenv(LOCK_VARIABLE, lock)
        assert psutil.pid_exists(helper)
        assert helper not in {process.pid for process in find_leftovers().processes}
    finally:
        os.kill(helper, signal.SIGKILL)
