"""CPU seconds of a process tree, read at window edges."""

import os
import time

from loadtest.lab.cpu import cpu_seconds_between, read_tree_cpu


def test_cpu_between_readings_survives_threads_coming_and_going() -> None:
    before = {(10, 10): (1.0, 5.0), (11, 11): (1.0, 2.0), (10, 12): (1.0, 9.0)}
    # (11, 11): the pid was reused by a new process; (10, 12) ended; (10, 13) is new.
    after = {(10, 10): (1.0, 5.5), (11, 11): (3.0, 0.25), (10, 13): (1.0, 0.5)}
    assert cpu_seconds_between(before, after) == 0.5 + 0.25 + 0.5


def test_read_tree_cpu_counts_this_process_in_nanoseconds() -> None:
    before = read_tree_cpu(os.getpid())
    assert (os.getpid(), os.getpid()) in before
    # 3 ms of this thread's own CPU (less than one 10 ms tick), however busy the machine is.
    deadline = time.thread_time() + 0.003
    while time.thread_time() < deadline:
        pass
    spent = cpu_seconds_between(before, read_tree_cpu(os.getpid()))
    assert 0.003 <= spent < 0.5
    assert read_tree_cpu(2**22 + 12345) == {}
