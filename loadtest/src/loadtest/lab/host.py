"""Facts about the machine, so a reader can tell whose numbers these are."""

import os
import platform
from pathlib import Path

import psutil


def cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def host_facts() -> dict[str, object]:
    return {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "cores_available": len(os.sched_getaffinity(0)),
        "memory_gib": round(psutil.virtual_memory().total / 1024**3, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }
