"""A memory-limited cgroup for a process tree: what a container's `--memory` limit is, without
the container. cgroup v2 (`memory.max`, `memory.events`) where the memory controller is there,
else v1 (`memory.limit_in_bytes`, `memory.oom_control`). Either charges what the tree's
processes touch first: their anonymous memory, the page cache they read in, socket buffers, as
a container's limit does. Needs root (or a delegated cgroup); where it cannot be made, the
reason is one line."""

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from loadtest.lab.errors import LabError

CGROUP_ROOT = Path("/sys/fs/cgroup")
MIB = 1024 * 1024


@dataclass(frozen=True)
class MemoryCgroup:
    path: Path
    version: int  # 1 or 2

    @property
    def procs_file(self) -> Path:
        """Write a PID here to move that process (and its future children) in."""
        return self.path / "cgroup.procs"

    def oom_kills(self) -> int:
        """Processes the kernel killed for going over the limit."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        for line in (self.path / name).read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def usage_mib(self) -> float:
        name = "memory.current" if self.version == 2 else "memory.usage_in_bytes"
        return int((self.path / name).read_text()) / MIB

    def peak_mib(self) -> float | None:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        peak = self.path / name
        return int(peak.read_text()) / MIB if peak.exists() else None

    def remove(self) -> None:
        """Kill whatever is still in it, then remove it; one line if it cannot go."""
        for _ in range(100):
            try:
                left = [int(pid) for pid in self.procs_file.read_text().split()]
            except FileNotFoundError:
                return
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.05)
        raise LabError(f"cannot remove the cgroup {self.path}: processes are still in it")


def memory_controller() -> tuple[Path, int] | None:
    """Where memory cgroups are made here, and their version."""
    controllers = CGROUP_ROOT / "cgroup.controllers"
    if controllers.exists() and "memory" in controllers.read_text().split():
        return CGROUP_ROOT, 2
    if (CGROUP_ROOT / "memory" / "memory.limit_in_bytes").exists():
        return CGROUP_ROOT / "memory", 1
    return None


def create_memory_cgroup(name: str, limit_mib: int) -> MemoryCgroup:
    """A new cgroup of its own limited to `limit_mib`, with no swap to spill into; one line
    naming the reason where it cannot be made."""
    found = memory_controller()
    if found is None:
        raise LabError(f"no memory cgroup controller under {CGROUP_ROOT} (cgroup v1 or v2)")
    parent, version = found
    path = parent / f"{name}-{os.getpid()}"
    limit = str(limit_mib * MIB)
    try:
        path.mkdir()
    except OSError as error:
        raise LabError(f"cannot create the cgroup {path}: {error.strerror}") from None
    cgroup = MemoryCgroup(path, version)
    try:
        if version == 2:
            (path / "memory.max").write_text(limit)
            if (path / "memory.swap.max").exists():
                (path / "memory.swap.max").write_text("0")
        else:
            (path / "memory.limit_in_bytes").write_text(limit)
            if (path / "memory.memsw.limit_in_bytes").exists():  # memory and swap together
                (path / "memory.memsw.limit_in_bytes").write_text(limit)
    except OSError as error:
        cgroup.remove()
        raise LabError(f"cannot set the limit of the cgroup {path}: {error.strerror}") from None
    return cgroup
