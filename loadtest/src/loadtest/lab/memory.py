"""Memory of an app: RSS and USS summed over its process tree (all uvicorn workers)."""

import threading
from collections.abc import Callable
from dataclasses import dataclass

import psutil

MIB = 1024 * 1024


@dataclass(frozen=True)
class MemoryReading:
    rss_mib: float
    uss_mib: float | None  # None where it cannot be known (a container's own accounting)


def read_tree_memory(pid: int) -> MemoryReading:
    root = psutil.Process(pid)
    rss = uss = 0
    for process in (root, *root.children(recursive=True)):
        try:
            info = process.memory_full_info()  # USS: pages only this process holds
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        rss += info.rss
        uss += info.uss
    return MemoryReading(round(rss / MIB, 1), round(uss / MIB, 1))


class PeakMemorySampler:
    """Samples memory in a background thread while load runs; keeps the peak of each."""

    def __init__(self, read_memory: Callable[[], MemoryReading], interval_s: float = 0.5) -> None:
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
            self.peak_rss_mib = max(self.peak_rss_mib, reading.rss_mib)
            if reading.uss_mib is not None:
                self.peak_uss_mib = max(self.peak_uss_mib or 0.0, reading.uss_mib)
            self.samples += 1
            self._stop.wait(self.interval_s)
