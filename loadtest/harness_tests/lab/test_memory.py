"""Known answers for what the workers mode reads of memory: PSS splits a shared page between the
processes that map it, RSS counts it in each; a memory cgroup kills what goes over its limit."""

import subprocess
import sys
import textwrap

import pytest

from loadtest.lab.cgroup import create_memory_cgroup, memory_controller
from loadtest.lab.errors import LabError
from loadtest.lab.memory import read_tree_pss

SHARED_MIB = 200
CHILDREN = 4
# A parent writes 200 MiB (every page), forks four children that only read it, and says so.
FORKING_PARENT = textwrap.dedent(
    f"""
    import os, sys
    page = 4096
    shared = bytearray({SHARED_MIB} * 1024 * 1024)
    shared[::page] = b"\\x01" * (len(shared) // page)  # every page written: resident, private
    children = []
    for _ in range({CHILDREN}):
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:
            total = sum(shared[::page])  # reads every page, writes none
            os.write(writer, b"x")
            os.read(0, 1)  # until the test is done
            os._exit(0 if total else 1)
        os.read(reader, 1)
        children.append(pid)
    print("ready", flush=True)
    sys.stdin.read(1)
    """
)


def test_the_pss_of_a_forked_tree_counts_a_shared_page_once() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", FORKING_PARENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None and parent.stdout.readline() == "ready\n"
        readings = read_tree_pss(parent.pid)
    finally:
        parent.kill()
        parent.wait()
    assert len(readings) == 1 + CHILDREN
    pss_mib = sum(reading.pss_kib for reading in readings) / 1024
    rss_mib = sum(reading.rss_kib for reading in readings) / 1024
    anon_mib = sum(reading.pss_anon_kib or 0 for reading in readings) / 1024
    # The 200 MiB once, plus five small interpreters (a few MiB each, mostly shared too).
    assert SHARED_MIB <= pss_mib < SHARED_MIB + 40, pss_mib
    assert SHARED_MIB <= anon_mib < SHARED_MIB + 40, anon_mib
    # Summed RSS counts it in every process: five times over.
    assert rss_mib > (1 + CHILDREN) * SHARED_MIB, rss_mib
    # Each child holds almost none of it alone.
    assert all(reading.uss_kib / 1024 < 10 for reading in readings[1:])


@pytest.mark.skipif(memory_controller() is None, reason="no memory cgroup controller here")
def test_a_memory_cgroup_kills_what_goes_over_its_limit_and_counts_it() -> None:
    try:
        cgroup = create_memory_cgroup("lab-test", 64)
    except LabError as error:  # not root, no delegation
        pytest.skip(str(error))
    try:
        greedy = subprocess.run(
            [sys.executable, "-c", "x = bytearray(b'1') * (256 * 1024 * 1024)"],
            preexec_fn=lambda: cgroup.procs_file.write_text("0"),
            check=False,
        )
        assert greedy.returncode == -9  # SIGKILL, from the kernel's OOM killer
        assert cgroup.oom_kills() >= 1
        peak = cgroup.peak_mib()
        assert peak is None or peak <= 64 + 1
    finally:
        cgroup.remove()
    assert not cgroup.path.exists()
