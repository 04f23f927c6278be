"""Memory of an app: RSS and USS summed over its process tree (all uvicorn workers)."""

import threading
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from loadtest.lab.process_tree import tree

MIB = 1024 * 1024


@dataclass(frozen=True)
class MemoryReading:
    rss_mib: float
    uss_mib: float | None  # None where it cannot be known (a container's own accounting)


def read_tree_memory(pid: int) -> MemoryReading:
    rss = uss = 0
    for process in tree(pid):
        try:
            info = process.memory_full_info()  # USS: pages only this process holds
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        rss += info.rss
        uss += info.uss
    return MemoryReading(round(rss / MIB, 1), round(uss / MIB, 1))


class PeakMemorySampler:
    """Samples memory in a background thread while load runs; keeps the peak of each."""

    def __init__(
        self, read_memory: Callable[[], MemoryReading | None], interval_s: float = 0.5
    ) -> None:
        self.read_memory = read_memory
        self.interval_s = interval_s
        self.peak_rss_mib = 0.0
        self.peak_uss_mib: float | None = None
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-sampler", daemon=True)

    def __enter__(self) -> "PeakMemorySampler":
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                reading = self.read_memory()
            except Exception:  # noqa: BLE001 - the app went away; the cell reports it
                return
            if reading is None:  # nothing of it can be read (a service reached by URL)
                return
            self.peak_rss_mib = max(self.peak_rss_mib, reading.rss_mib)
            if reading.uss_mib is not None:
                self.peak_uss_mib = max(self.peak_uss_mib or 0.0, reading.uss_mib)
            self.samples += 1
            self._stop.wait(self.interval_s)


@dataclass(frozen=True)
class ProcessMemory:
    """One process's pages, from /proc/PID/smaps_rollup (KiB). PSS: each page divided by the
    number of processes that map it, so the PSS of a process tree adds up to the memory the
    tree really holds; RSS counts a shared page in every process that maps it. USS: the pages
    no other process maps (private clean and dirty)."""

    pid: int
    rss_kib: int
    pss_kib: int
    pss_anon_kib: int | None  # None on kernels before 5.x that do not split PSS
    pss_file_kib: int | None
    uss_kib: int


def read_process_memory(pid: int) -> ProcessMemory:
    """Raises FileNotFoundError / ProcessLookupError when the process is gone."""
    fields: dict[str, int] = {}
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            name, _, rest = line.partition(":")
            value = rest.split()
            if len(value) == 2 and value[1] == "kB":
                fields[name] = int(value[0])
    if "Pss" not in fields:
        raise ProcessLookupError(f"/proc/{pid}/smaps_rollup holds no Pss (the process is gone)")
    return ProcessMemory(
        pid,
        fields["Rss"],
        fields["Pss"],
        fields.get("Pss_Anon"),
        fields.get("Pss_File"),
        fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0),
    )


def read_tree_pss(pid: int) -> list[ProcessMemory]:
    """Every process of the tree rooted at `pid` (root first) that is still there."""
    readings = []
    for process in tree(pid):
        try:
            readings.append(read_process_memory(process.pid))
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return readings
