"""./test.sh holds the machine: a second run is refused in one line naming the first, the lock
ends with its holder (kill -9 included) and with nothing it started, and `report` and --help
need no lock. Real runs through test.sh, each test with a lock file of its own
(LAB_RUN_LOCK_FILE), so they never wait on, or block, a run on the machine."""

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from harness_tests.runner import REPOSITORY_ROOT, only_run, runner_environment
from loadtest.modes.registry import MODES

LOCK_SCRIPT = REPOSITORY_ROOT / "scripts" / "one_run_at_a_time.sh"
OLD_MICRO_RUN = REPOSITORY_ROOT / "loadtest" / "harness_tests" / "fixtures" / "runs" / "micro"
# The promise: refused before a database or a port is touched, within 5 s. The refusal
# itself takes milliseconds (no sync, no Python runner), so the bound leaves room for any machine.
REFUSED_WITHIN_S = 5


def start_lab(*argv: str, lock: Path) -> subprocess.Popen[str]:
    """./test.sh itself (its lock, its bootstrap, then the runner), with `lock` for the lock."""
    return subprocess.Popen(
        [str(REPOSITORY_ROOT / "test.sh"), *argv],
        cwd=REPOSITORY_ROOT,
        env=runner_environment(LAB_RUN_LOCK_FILE=str(lock)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(process: subprocess.Popen[str], timeout: float = 120) -> tuple[str, str]:
    stdout, stderr = process.communicate(timeout=timeout)
    return stdout, stderr


def wait_until_it_measures(run: subprocess.Popen[str], lock: Path) -> None:
    """Until the lock file names the run (it does once it holds the lock) and the runner has
    started a micro-benchmark process (not only the bootstrap's uv), so there is a child of the
    runner to look at."""
    deadline = time.monotonic() + 120
    while not (
        lock.exists()
        and lock.read_text().startswith(f"{run.pid}\t")
        and any("commons.probes.microbench" in line for line in command_lines(run.pid))
    ):
        assert run.poll() is None, finished(run)
        assert time.monotonic() < deadline, "the run never began to measure"
        time.sleep(0.1)


def command_lines(pid: int) -> list[str]:
    lines = []
    for child in children_of(pid):
        try:
            lines.append(" ".join(psutil.Process(child).cmdline()))
        except psutil.Error:  # gone meanwhile
            continue
    return lines


def holding(lock: Path, pids: set[int]) -> set[int]:
    """The processes among `pids` with the lock file open (and so able to hold its lock)."""
    found = set()
    for pid in pids:
        try:
            descriptors = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:  # gone meanwhile
            continue
        for descriptor in descriptors:
            try:
                if os.readlink(descriptor) == str(lock):
                    found.add(pid)
            except OSError:
                continue
    return found


def children_of(pid: int) -> set[int]:
    try:
        return {child.pid for child in psutil.Process(pid).children(recursive=True)}
    except psutil.NoSuchProcess:
        return set()


@pytest.mark.parametrize(
    ("command_line", "needs_it"),
    [
        ("", True),
        ("--quick", True),
        ("run --quick", True),
        ("ladder", True),
        ("up --scenario write", True),
        ("dataset", True),
        ("report results/latest", False),
        ("--help", False),
        ("-h", False),
        ("micro --quick --help", False),
    ],
)
def test_every_mode_but_report_needs_the_machine_unless_asked_for_help(
    command_line: str, needs_it: bool
) -> None:
    shell = subprocess.run(
        ["bash", "-c", f'source "{LOCK_SCRIPT}"; needs_the_machine "$@"', "bash"]
        + command_line.split(),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert shell.returncode == (0 if needs_it else 1), shell.stderr


def test_the_lock_free_modes_are_the_registrys() -> None:
    [declared] = re.findall(r'^LOCK_FREE_MODES="([^"]*)"$', LOCK_SCRIPT.read_text(), re.MULTILINE)
    assert set(declared.split()) == {
        name for name, mode in MODES.items() if not mode.holds_the_machine
    }


def test_a_lock_planted_as_a_symlink_is_refused_and_its_target_left_alone(tmp_path) -> None:
    """Issue 53: the default lock is a fixed name in /tmp; a symlink planted there by another
    user must not get a file of root's (here a stand-in) truncated and written."""
    target = tmp_path / "bashrc"
    target.write_text("mine\n")
    lock = tmp_path / "lab.lock"
    lock.symlink_to(target)
    shell = subprocess.run(
        ["bash", "-c", f'source "{LOCK_SCRIPT}"; hold_the_machine benchmark'],
        env={**os.environ, "LAB_RUN_LOCK_FILE": str(lock)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert shell.returncode == 1
    refusal = f"./test.sh: error: the run lock {lock} is a symlink (to {target})"
    assert shell.stderr.startswith(refusal)
    assert shell.stderr.count("\n") == 1
    assert target.read_text() == "mine\n" and lock.is_symlink()


def test_a_second_run_is_refused_naming_the_first_which_finishes_intact(tmp_path) -> None:
    lock = (tmp_path / "run.lock").resolve()
    first = start_lab("micro", "--quick", "--results-dir", str(tmp_path / "first"), lock=lock)
    try:
        wait_until_it_measures(first, lock)
        # The runner holds the lock (test.sh's descriptor, through exec); nothing it started does.
        started_by_it = children_of(first.pid)
        assert holding(lock, {first.pid}) == {first.pid}
        assert holding(lock, started_by_it) == set(), started_by_it

        began = time.monotonic()
        second = start_lab("micro", "--quick", "--results-dir", str(tmp_path / "second"), lock=lock)
        _, second_stderr = finished(second, timeout=60)
        refused_after_s = time.monotonic() - began
        assert second.returncode == 1
        [line] = second_stderr.splitlines()
        assert line.startswith(
            f"./test.sh: error: another run has this machine: ./test.sh micro, pid {first.pid}, "
            f"in {REPOSITORY_ROOT.resolve()}, since "
        ), line
        assert line.endswith(
            "two runs at once measure each other, so wait for it to end or stop it "
            "(see ./test.sh --help)"
        )
        assert refused_after_s < REFUSED_WITHIN_S, refused_after_s
        assert not (tmp_path / "second").exists()  # nothing started, nothing written

        # What needs no lock still works meanwhile: help, a mode's help, rebuilding a report.
        for argv in (["--help"], ["micro", "--help"]):
            stdout, stderr = finished(start_lab(*argv, lock=lock), timeout=60)
            assert "usage: ./test.sh" in stdout, stderr
        old_run = tmp_path / "old-micro"
        old_run.mkdir()
        shutil.copy(OLD_MICRO_RUN / "results.json", old_run)
        report = start_lab("report", str(old_run), lock=lock)
        _, stderr = finished(report, timeout=60)
        assert report.returncode == 0, stderr
        assert (old_run / "report.md").exists()

        stdout, stderr = finished(first, timeout=180)
    finally:
        if first.poll() is None:
            first.send_signal(signal.SIGINT)
            first.wait(timeout=60)
    assert first.returncode == 0, stderr
    run_dir = only_run(tmp_path / "first")
    assert {"results.json", "report.md"} <= {path.name for path in run_dir.iterdir()}


def test_a_run_killed_with_sigkill_leaves_the_machine_free(tmp_path) -> None:
    lock = (tmp_path / "run.lock").resolve()
    killed = start_lab("micro", "--quick", "--results-dir", str(tmp_path / "killed"), lock=lock)
    orphans: set[int] = set()
    try:
        wait_until_it_measures(killed, lock)
        # What it started lives on after it (each in a session of its own); stopped, so it is
        # certainly still there when the next run asks for the machine.
        orphans = children_of(killed.pid)
        for pid in orphans:
            os.kill(pid, signal.SIGSTOP)
        killed.kill()
        killed.wait(timeout=30)
        assert all(psutil.pid_exists(pid) for pid in orphans)

        # The next run gets the machine: the dataset mode takes it, then stops in one line of
        # its own (no DATABASE_URL), not the refusal; before it, a line on what is left.
        next_run = start_lab("dataset", lock=lock)
        _, stderr = finished(next_run, timeout=60)
        assert "another run has this machine" not in stderr
        note, error = stderr.strip().splitlines()
        assert note.startswith(
            f"./test.sh: note: an earlier run killed outright left {len(orphans)} processes ("
        ) and note.endswith("./test.sh clean stops them and removes its data folders")
        assert error == (
            "./test.sh: error: the dataset mode loads into DATABASE_URL, which is not set"
        )
        assert lock.read_text().startswith(f"{next_run.pid}\tdataset\t")

        # `clean` stops them (stopped with SIGSTOP as they are), and only them.
        stdout, stderr = finished(start_lab("clean", lock=lock), timeout=60)
        assert stdout.startswith(f"Stopped {len(orphans)} processes (") and not stderr
        assert not any(psutil.pid_exists(pid) for pid in orphans)
        stdout, _ = finished(start_lab("clean", lock=lock), timeout=60)
        assert stdout == "Nothing an earlier run started is left.\n"
    finally:
        for pid in orphans:  # what the killed run left: ours, by its process id
            try:
                os.kill(pid, signal.SIGKILL)
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
