"""Facts about the machine, so a reader can tell whose numbers these are."""

import os
import platform
import sys
from pathlib import Path
from typing import Any

import psutil

from loadtest.lab.arms import BASELINE, arm_python
from loadtest.lab.interpreter import build_facts, describe


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
        "interpreter": lab_interpreter(),
    }


def lab_interpreter() -> dict[str, object]:
    """The build every local arm runs on: the lab's environments all share the interpreter the
    bootstrap picked (scripts/bootstrap.sh), so the baseline's stands for them all."""
    python = arm_python(BASELINE)
    return build_facts(python if python.exists() else sys.executable) | {"where": "local"}


def interpreter_text(host: dict[str, Any]) -> str:
    """`Python 3.11.2 (CPython 3.11.2, PGO+LTO, local)`: which build the figures come from
    (runs before the lab recorded it say so)."""
    facts = host.get("interpreter")
    if not facts:
        return f"Python {host['python']} (its build was not recorded)"
    return f"Python {facts['version']} ({describe(facts)}, {facts.get('where', 'local')})"
