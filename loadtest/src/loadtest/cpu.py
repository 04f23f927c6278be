"""CPU seconds (user + system) of a process tree, read at window boundaries."""

from collections.abc import Mapping

import psutil

# pid -> (create time, CPU seconds): a pid reused by a new process is not mistaken for the old.
TreeCpu = dict[int, tuple[float, float]]


def read_tree_cpu(pid: int) -> TreeCpu:
    """CPU seconds of `pid` and all its descendants, per process; empty if it is gone."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return {}
    readings: TreeCpu = {}
    for process in processes:
        try:
            with process.oneshot():
                times = process.cpu_times()
                readings[process.pid] = (process.create_time(), times.user + times.system)
        except psutil.Error:
            continue
    return readings


def cpu_seconds_between(before: Mapping[int, tuple[float, float]], after: TreeCpu) -> float:
    """CPU the tree spent between two readings; a process born in between counts whole (it
    started inside the span), one that ended in between is lost (its last share unknown)."""
    spent = 0.0
    for pid, (created, seconds) in after.items():
        earlier = before.get(pid)
        if earlier is not None and earlier[0] == created:
            spent += seconds - earlier[1]
        else:
            spent += seconds
    return max(spent, 0.0)
