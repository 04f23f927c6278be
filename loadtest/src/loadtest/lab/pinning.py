"""CPU pinning: the app on its own cores, the load generator and PostgreSQL on the others."""

import os
from dataclasses import dataclass, replace

# What runs on the load side's CPUs in a paired run.
PAIRED_LOAD_SIDE = ("locust", "PostgreSQL", "the runner")


@dataclass(frozen=True)
class PinningPlan:
    enabled: bool
    app_cpus: tuple[int, ...]
    load_cpus: tuple[int, ...]
    note: str
    load_side: tuple[str, ...] = ()  # what runs on load_cpus, as the note names it

    def without(self, what: str, because: str) -> "PinningPlan":
        """The plan with `what` no longer on the load side (an external PostgreSQL), and the
        note saying so."""
        if not self.enabled or what not in self.load_side:
            return self
        load_side = tuple(item for item in self.load_side if item != what)
        note = f"{pinning_note(self.app_cpus, self.load_cpus, load_side)} ({because})"
        return replace(self, load_side=load_side, note=note)

    def as_dict(self) -> dict[str, object]:
        return {
            "enabled": self.enabled,
            "app_cpus": list(self.app_cpus),
            "load_cpus": list(self.load_cpus),
            "note": self.note,
        }


def plan_pinning(
    requested: bool,
    available: set[int] | None = None,
    load_side: tuple[str, ...] = PAIRED_LOAD_SIDE,
) -> PinningPlan:
    """The app on one half of the CPUs, `load_side` on the other (pinned when it starts)."""
    cpus = tuple(sorted(available if available is not None else os.sched_getaffinity(0)))
    if not requested:
        return PinningPlan(False, cpus, cpus, "pinning turned off (--no-pin)")
    if len(cpus) < 2:
        return PinningPlan(False, cpus, cpus, f"not pinned: only {len(cpus)} CPU available")
    half = len(cpus) // 2
    load_cpus, app_cpus = cpus[:half], cpus[half:]
    note = pinning_note(app_cpus, load_cpus, load_side)
    return PinningPlan(True, app_cpus, load_cpus, note, load_side)


def pinning_note(
    app_cpus: tuple[int, ...], load_cpus: tuple[int, ...], load_side: tuple[str, ...]
) -> str:
    note = f"app on CPU {format_cpus(app_cpus)}"
    if not load_side:
        return note
    names = (
        load_side[0] if len(load_side) == 1 else f"{', '.join(load_side[:-1])} and {load_side[-1]}"
    )
    return f"{note}; {names} on CPU {format_cpus(load_cpus)}"


def format_cpus(cpus: tuple[int, ...]) -> str:
    return ",".join(str(cpu) for cpu in cpus)


def process_cpus(pid: int | None) -> tuple[int, ...] | None:
    """The CPUs a process may run on (a container's: its cpuset), where it can be read."""
    import psutil

    if pid is None:
        return None
    try:
        return tuple(sorted(psutil.Process(pid).cpu_affinity() or ()))
    except (psutil.Error, OSError):
        return None


def pin_process_tree(pid: int, cpus: tuple[int, ...]) -> None:
    """Pin a running process and its children (new children inherit the parent's CPUs)."""
    import psutil

    from loadtest.lab.process_tree import tree

    for process in tree(pid):
        try:
            process.cpu_affinity(list(cpus))
        except psutil.NoSuchProcess:
            continue
