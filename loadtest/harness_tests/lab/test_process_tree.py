"""A process tree read from the tree alone: the same processes psutil finds by reading every
process on the machine, children and grandchildren, threads' children too."""

import subprocess
import sys
import time

import psutil
import pytest

from loadtest.lab import process_tree
from loadtest.lab.process_tree import descendant_pids, descendants, tree

# A child that starts a grandchild from a thread (its children file is the thread's, not the
# main thread's), then waits.
FAMILY = """
import subprocess, sys, threading, time
sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
threading.Thread(target=lambda: subprocess.Popen(sleeper)).start()
subprocess.Popen(sleeper)
time.sleep(60)
"""


@pytest.fixture
def family() -> psutil.Process:
    parent = subprocess.Popen([sys.executable, "-c", FAMILY])
    root = psutil.Process(parent.pid)
    deadline = time.monotonic() + 30
    while len(root.children(recursive=True)) < 2:
        assert time.monotonic() < deadline, "the grandchildren never started"
        time.sleep(0.05)
    yield root
    for process in [*root.children(recursive=True), root]:
        process.kill()
    parent.wait()


def test_the_tree_is_what_psutil_finds(family: psutil.Process) -> None:
    expected = {child.pid for child in family.children(recursive=True)}
    assert process_tree.kernel_lists_children()  # Linux keeps the files these VMs read
    assert set(descendant_pids(family.pid)) == expected and len(expected) == 2
    assert [process.pid for process in tree(family.pid)][0] == family.pid
    assert {process.pid for process in descendants(family.pid)} == expected


def test_without_the_kernels_files_psutil_walks_the_tree(
    family: psutil.Process, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process_tree, "kernel_lists_children", lambda: False)
    assert set(descendant_pids(family.pid)) == {c.pid for c in family.children(recursive=True)}


def test_a_process_that_is_gone_has_no_tree() -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    assert descendant_pids(ended.pid) == [] and descendants(ended.pid) == []
    with pytest.raises(psutil.NoSuchProcess):
        tree(ended.pid)
