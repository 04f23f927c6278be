"""One process tree of a server with N workers (servers.py): started (in a memory cgroup, for
the limit check), every worker waited for, its memory read, always killed whole."""

import os
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from subprocess import Popen
from typing import Any

import psutil

from loadtest.generated.apps import exception_line
from loadtest.lab.arms import ARMS, arm_python
from loadtest.lab.cgroup import MemoryCgroup
from loadtest.lab.memory import read_tree_pss
from loadtest.lab.processes import child_environment, ensure_port_free, start_process
from loadtest.modes.workers.apps import AppUnderTest
from loadtest.modes.workers.routes import Unfinished
from loadtest.modes.workers.servers import SERVERS, server_command, server_environment

MIB_PER_KIB = 1 / 1024
POLL_S = 0.01


@dataclass(frozen=True)
class Subject:
    arm: str
    server: str
    workers: int

    @property
    def key(self) -> str:
        return f"{self.arm} {self.server} ×{self.workers}"


@dataclass
class ServedTree:
    """A started server: its process group, where its workers say they are ready, its log."""

    process: "Popen[bytes]"
    ready_dir: Path
    launched: float  # wall clock, as the workers write theirs
    log_path: Path
    base_url: str

    def ready(self) -> dict[int, float]:
        """PID -> the wall-clock time it was ready, for every worker that ever was."""
        return {
            int(path.name): float(path.read_text())
            for path in self.ready_dir.iterdir()
            if path.name.isdigit()
        }


@contextmanager
def served(
    subject: Subject,
    app: AppUnderTest,
    *,
    port: int,
    cpus: tuple[int, ...] | None,
    log_path: Path,
    bound_s: float,
    cgroup: MemoryCgroup | None = None,
) -> Iterator[ServedTree]:
    """The server started (in `cgroup`, if given), and killed, its whole group, at the end
    whatever happens (Ctrl-C included)."""
    ensure_port_free(port, ARMS[subject.arm].environment)
    server = SERVERS[subject.server]
    with tempfile.TemporaryDirectory(prefix="lab-workers-ready-") as ready_dir:
        environment = child_environment(
            DATABASE_URL=app.database_url,
            **server_environment(server, app.module, Path(ready_dir), app.http),
            **({"PYTHONPATH": app.pythonpath} if app.pythonpath else {}),
        )
        launched = time.time()
        process = start_process(
            server_command(
                arm_python(subject.arm), server, subject.workers, port, bound_s, app.http
            ),
            log_path=log_path,
            cpus=cpus,
            env=environment,
            cgroup_procs=cgroup.procs_file if cgroup else None,
        )
        try:
            yield ServedTree(
                process, Path(ready_dir), launched, log_path, f"http://127.0.0.1:{port}"
            )
        finally:  # Ctrl-C included: the tree runs in its own session and would outlive us
            kill_tree(process)


def wait_until_ready(tree: ServedTree, workers: int, bound_s: float) -> dict[int, float]:
    """Every worker ready (its lifespan started): PID -> ready time. Unfinished when the bound
    passes first or the server exits."""
    deadline = time.monotonic() + bound_s
    while True:
        ready = tree.ready()
        if len(ready) >= workers:
            if len(ready) > workers:
                raise Unfinished(
                    f"failed: {len(ready)} workers were ready for {workers} (one restarted)"
                )
            return ready
        if tree.process.poll() is not None:
            raise Unfinished(f"failed: {exception_line(tree.log_path)}")
        if time.monotonic() > deadline:
            raise Unfinished(f"over {bound_s:g} s ({len(ready)} of {workers} workers ready)")
        time.sleep(POLL_S)


def memory_figures(root_pid: int, worker_pids: set[int], suffix: str) -> dict[str, Any]:
    """The tree's memory, in MiB: PSS in all (anonymous, file-backed), RSS summed over its
    processes, the median worker's USS, each worker's, and the master's (the tree's root)."""
    readings = read_tree_pss(root_pid)
    missing = worker_pids - {reading.pid for reading in readings}
    if missing:
        raise Unfinished(f"failed: worker {min(missing)} is gone")
    workers = sorted(
        (reading for reading in readings if reading.pid in worker_pids), key=lambda r: r.pid
    )
    master = next((reading for reading in readings if reading.pid == root_pid), None)
    if master is None:
        raise Unfinished("failed: the server's master process is gone")

    def mib(kib: float) -> float:
        return round(kib * MIB_PER_KIB, 2)

    anon = [reading.pss_anon_kib for reading in readings]
    files = [reading.pss_file_kib for reading in readings]
    return {
        f"pss_{suffix}_mib": mib(sum(reading.pss_kib for reading in readings)),
        f"pss_anon_{suffix}_mib": mib(sum(anon)) if None not in anon else None,  # type: ignore[arg-type]
        f"pss_file_{suffix}_mib": mib(sum(files)) if None not in files else None,  # type: ignore[arg-type]
        f"rss_sum_{suffix}_mib": mib(sum(reading.rss_kib for reading in readings)),
        f"worker_uss_{suffix}_mib": mib(median(reading.uss_kib for reading in workers)),
        f"master_uss_{suffix}_mib": mib(master.uss_kib),
        f"worker_uss_each_{suffix}_mib": [mib(reading.uss_kib) for reading in workers],
        f"processes_{suffix}": len(readings),
    }


def kill_tree(process: "Popen[bytes]") -> None:
    """The whole process group at once (a figure is taken: no graceful shutdown to wait for),
    and every process of it gone before the next tree binds the port."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
    psutil.wait_procs(group_members(process.pid), timeout=10)


def group_members(group: int) -> list[psutil.Process]:
    """The processes still in the process group (a killed worker's parent may already be
    reaped: its orphans are found by their group, not as its children)."""
    members = []
    for candidate in psutil.process_iter():
        try:
            if os.getpgid(candidate.pid) == group:
                members.append(candidate)
        except (ProcessLookupError, psutil.Error):
            continue
    return members
