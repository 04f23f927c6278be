"""Error paths end in one line and a non-zero exit; Ctrl-C tears everything down."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time

import pytest

from harness_tests.runner import (
    REPOSITORY_ROOT,
    TINY_RUN,
    free_port,
    lab_processes,
    leftover_processes,
    port_options,
    run_in_process,
    run_runner,
    runner_command,
    runner_environment,
)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_port_in_use_is_one_line_and_non_zero(tmp_path) -> None:
    before = lab_processes()
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        busy_port = squatter.getsockname()[1]
        result = run_runner(
            *TINY_RUN,
            "--no-calibration",
            "--results-dir",
            str(tmp_path),
            *port_options(v1=busy_port),
        )
    assert result.returncode == 1
    [line] = error_lines(result.stderr)
    assert line == (
        f"./test.sh: error: port {busy_port} (for app_v1) is already in use; stop whatever "
        "listens there (an earlier ./test.sh? ./test.sh clean stops what a killed run left) or "
        "move v1 with --port-v1 PORT"
    )
    assert leftover_processes(before) == {}


@pytest.mark.parametrize("mode", ["benchmark", "ladder", "profile"])
def test_unreachable_database_is_one_line_and_leaves_no_results_folder(mode: str, tmp_path) -> None:
    results_dir = tmp_path / "results"
    result = run_in_process(
        mode,
        "--results-dir",
        str(results_dir),
        *(port_options() if mode != "profile" else []),
        DATABASE_URL="postgresql://lab:secret@127.0.0.1:1/lab",
    )
    assert result.returncode == 1
    [line] = error_lines(result.stderr)
    assert line.startswith("./test.sh: error: cannot use the database server at 127.0.0.1:1/lab")
    assert "secret" not in result.stderr
    # It failed before measuring: no empty run folder is left behind (results/ neither).
    assert not results_dir.exists()


@pytest.mark.parametrize(
    "startup_samples", ["0", "1"], ids=["while-starting-the-arms", "in-the-start-up-samples"]
)
def test_a_run_that_fails_after_calibration_leaves_no_folder(
    tmp_path, startup_samples: str
) -> None:
    """As seen on a shared machine: another program takes the arms' ports after the run checked
    them, while the load generator calibrates. The run dies before any arm gave a figure, so
    nothing is left of it: no folder holding only calibration/."""
    before = lab_processes()
    results_dir = tmp_path / "results"
    ports = {arm: free_port() for arm in ("v1", "v2", "v2_latest")}  # TINY_RUN's arms
    runner = subprocess.Popen(
        runner_command(
            *TINY_RUN,
            "--startup-samples",
            startup_samples,
            "--results-dir",
            str(results_dir),
            *port_options(**ports),
        ),
        cwd=REPOSITORY_ROOT,
        env=runner_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with contextlib.ExitStack() as squatters:
        deadline = time.monotonic() + 120
        # calibration/ exists once the ports were checked and the load generator is starting.
        while not list(results_dir.glob("*/calibration")):
            assert runner.poll() is None, runner.communicate()
            assert time.monotonic() < deadline, "the run never began its calibration"
            time.sleep(0.1)
        for port in ports.values():  # every arm's: whichever starts first finds its port taken
            squatter = squatters.enter_context(socket.socket())
            squatter.bind(("127.0.0.1", port))
            squatter.listen()
        _, stderr = runner.communicate(timeout=120)
    assert runner.returncode == 1, stderr
    assert "Traceback" not in stderr
    *_, line = error_lines(stderr)  # in a log, progress lines go to stderr too
    assert line.startswith("./test.sh: error: port ") and "is already in use" in line
    assert not results_dir.exists()  # neither the run's folder nor results/, which it created
    assert leftover_processes(before) == {}


def test_non_postgresql_database_url_is_refused(tmp_path) -> None:
    result = run_in_process(
        *TINY_RUN, "--results-dir", str(tmp_path), DATABASE_URL="sqlite:///x.db"
    )
    assert result.returncode == 1
    assert "must be a PostgreSQL URL" in result.stderr


def start_long_run(tmp_path) -> subprocess.Popen[str]:
    """A run far longer than any test, waited on until the apps and locust are up."""
    runner = subprocess.Popen(
        runner_command(
            "--pairs",
            "100",
            "--warmup",
            "30",
            "--dataset",
            "300",
            "--repeats",
            "1",
            "--no-calibration",
            "--results-dir",
            str(tmp_path),
            "--startup-samples",
            "0",
            *port_options(),
        ),
        cwd=REPOSITORY_ROOT,
        env=runner_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    # Wait until the app and locust are up (the warm-up has started).
    while time.monotonic() < deadline and not any(
        "locust" in command_line for command_line in _child_command_lines(runner.pid)
    ):
        assert runner.poll() is None, runner.communicate()[1]
        time.sleep(0.2)
    return runner


@pytest.mark.parametrize(
    "signal_number", [signal.SIGINT, signal.SIGHUP], ids=["ctrl-c", "terminal-closed"]
)
def test_interrupt_mid_run_stops_everything(tmp_path, signal_number: int) -> None:
    before = lab_processes()
    runner = start_long_run(tmp_path)
    assert lab_processes() - before, "nothing was started before the interrupt"
    runner.send_signal(signal_number)
    _, stderr = runner.communicate(timeout=60)
    assert runner.returncode == 130
    assert "interrupted; everything it started was stopped" in stderr
    assert "Traceback" not in stderr
    assert leftover_processes(before) == {}


def test_a_dead_embedded_postgresql_stops_the_run_in_one_line(tmp_path) -> None:
    import psutil

    before = lab_processes()
    runner = start_long_run(tmp_path)
    [postmaster] = [
        pid
        for pid in lab_processes() - before
        if "/bin/postgres" in " ".join(psutil.Process(pid).cmdline()[:1])
    ]
    os.kill(postmaster, signal.SIGKILL)
    _, stderr = runner.communicate(timeout=60)
    assert runner.returncode == 1
    assert "Traceback" not in stderr
    *progress, line = error_lines(stderr)  # in a log, progress lines go to stderr too
    assert all(not earlier.startswith("./test.sh") for earlier in progress)
    assert line.startswith(f"./test.sh: error: the embedded PostgreSQL (pid {postmaster}) ")
    assert line.endswith(
        "stopped on its own (killed, crashed or out of memory): nothing can use "
        "it any more; everything it started was stopped"
    )
    assert leftover_processes(before) == {}


def _child_command_lines(pid: int) -> list[str]:
    import psutil

    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    command_lines = []
    for child in children:
        try:
            command_lines.append(" ".join(child.cmdline()))
        except psutil.Error:  # exited, or a zombie (pg_ctl's leftover child)
            continue
    return command_lines


def test_unwritable_results_dir_is_one_line(tmp_path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = run_in_process(*TINY_RUN, "--results-dir", str(blocker / "results"))
    assert result.returncode == 1
    [line] = error_lines(result.stderr)
    assert line.startswith(f"./test.sh: error: cannot create {blocker}/results/")


def test_ctrl_c_stops_a_background_bootstrap(tmp_path) -> None:
    """A script's background job starts with SIGINT ignored; ./test.sh restores it, so a
    `kill -INT` stops even the bootstrap (here a uv that would sync for a minute)."""
    copy = tmp_path / "lab"
    (copy / "scripts").mkdir(parents=True)
    shutil.copy(REPOSITORY_ROOT / "test.sh", copy)
    for script in ("one_run_at_a_time.sh", "bootstrap.sh", "lab_projects.sh"):
        shutil.copy(REPOSITORY_ROOT / "scripts" / script, copy / "scripts")
    # The bootstrap picks the environments' interpreter with this file, by path.
    picker = "loadtest/src/loadtest/lab/interpreter.py"
    (copy / picker).parent.mkdir(parents=True)
    shutil.copy(REPOSITORY_ROOT / picker, copy / picker)
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    inside = tmp_path / "inside-uv-sync"  # the fake uv says when it runs: no race with a sleep
    (fake_bin / "uv").write_text(f"#!/bin/sh\ntouch {inside}\nsleep 60\n")
    (fake_bin / "uv").chmod(0o755)
    environment = runner_environment(
        PATH=f"{fake_bin}:{os.environ['PATH']}", LAB_RUN_LOCK_FILE=str(tmp_path / "run.lock")
    )
    environment.pop("LAB_SIGINT_DEFAULT", None)
    bootstrap = subprocess.Popen(
        [str(copy / "test.sh"), "--quick"],
        env=environment,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as `cmd &` does
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not inside.exists():  # now inside `uv sync`
        assert bootstrap.poll() is None, "the bootstrap ended before it reached uv sync"
        assert time.monotonic() < deadline, "the bootstrap never reached uv sync"
        time.sleep(0.05)
    os.killpg(bootstrap.pid, signal.SIGINT)
    try:
        # A bound on a hang (the fake uv sleeps 60 s), not on speed: 10 s once ran out inside
        # the parallel suite, on two CPUs shared with four real runs.
        bootstrap.wait(timeout=40)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(bootstrap.pid, signal.SIGKILL)
    assert bootstrap.returncode != 0
