"""CPU pinning: the app on its own cores, the load generator and PostgreSQL on the others."""

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class PinningPlan:
    enabled: bool
    app_cpus: tuple[int, ...]
    load_cpus: tuple[int, ...]
    note: str

    def as_dict(self) -> dict[str, object]:
        return {
            "enabled": self.enabled,
            "app_cpus": list(self.app_cpus),
            "load_cpus": list(self.load_cpus),
            "note": self.note,
        }


def plan_pinning(requested: bool, available: set[int] | None = None) -> PinningPlan:
    cpus = tuple(sorted(available if available is not None else os.sched_getaffinity(0)))
    if not requested:
        return PinningPlan(False, cpus, cpus, "pinning turned off (--no-pin)")
    if len(cpus) < 2:
        return PinningPlan(False, cpus, cpus, f"not pinned: only {len(cpus)} CPU available")
    half = len(cpus) // 2
    load_cpus, app_cpus = cpus[:half], cpus[half:]
    return PinningPlan(
        True,
        app_cpus,
        load_cpus,
        f"app on CPU {format_cpus(app_cpus)}; locust, PostgreSQL and the runner "
        f"on CPU {format_cpus(load_cpus)}",
    )


def format_cpus(cpus: tuple[int, ...]) -> str:
    return ",".join(str(cpu) for cpu in cpus)


def pin_process_tree(pid: int, cpus: tuple[int, ...]) -> None:
    """Pin a running process and its children (new children inherit the parent's CPUs)."""
    import psutil

    root = psutil.Process(pid)
    for process in (root, *root.children(recursive=True)):
        try:
            process.cpu_affinity(list(cpus))
        except psutil.NoSuchProcess:
            continue
