"""CPU seconds of a process tree, read at window edges.

On Linux each thread's run time comes from /proc/<pid>/task/<tid>/schedstat, in nanoseconds:
user + system time in /proc/<pid>/stat counts in 10 ms ticks, which is 2.5% of a 0.4 s window
per tick and made single windows read 86% or 110% busy. Elsewhere psutil's user + system.
"""

from pathlib import Path

import psutil

from loadtest.lab.process_tree import tree

# (pid, tid) -> (process create time, CPU seconds): a reused id is not mistaken for the old one.
TreeCpu = dict[tuple[int, int], tuple[float, float]]


def thread_cpu_seconds(pid: int) -> dict[int, float] | None:
    """Run time of each thread of `pid` (None where /proc has no schedstat)."""
    task_dir = Path(f"/proc/{pid}/task")
    try:
        tids = [int(entry.name) for entry in task_dir.iterdir()]
    except OSError:
        return None
    seconds = {}
    for tid in tids:
        try:
            seconds[tid] = int((task_dir / str(tid) / "schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            continue  # the thread ended meanwhile
    return seconds


def read_tree_cpu(pid: int) -> TreeCpu:
    """CPU seconds of `pid` and all its descendants, per thread; empty if it is gone."""
    try:
        processes = tree(pid)
    except psutil.Error:
        return {}
    readings: TreeCpu = {}
    for process in processes:
        try:
            created = process.create_time()
            threads = thread_cpu_seconds(process.pid)
            if threads is None:
                times = process.cpu_times()
                threads = {0: times.user + times.system}
        except psutil.Error:
            continue
        for tid, seconds in threads.items():
            readings[(process.pid, tid)] = (created, seconds)
    return readings


def cpu_seconds_between(before: TreeCpu, after: TreeCpu) -> float:
    """CPU the tree spent between two readings; a thread born in between counts whole (it
    started inside the span), one that ended in between is lost (its last share unknown)."""
    spent = 0.0
    for key, (created, seconds) in after.items():
        earlier = before.get(key)
        if earlier is not None and earlier[0] == created:
            spent += seconds - earlier[1]
        else:
            spent += seconds
    return max(spent, 0.0)


def busy_seconds(cpus: tuple[int, ...]) -> float:
    """Seconds the given CPUs have spent not idle since boot (all processes and the kernel)."""
    per_cpu = psutil.cpu_times(percpu=True)
    return sum(
        sum(per_cpu[cpu]) - per_cpu[cpu].idle - getattr(per_cpu[cpu], "iowait", 0.0)
        for cpu in cpus
        if cpu < len(per_cpu)
    )
