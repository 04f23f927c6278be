"""A process and its descendants, read from the tree alone.

psutil's children(recursive=True) reads /proc/*/stat of every process on the machine to find
the parents; the runner asks at every window's edge and twice a second while an arm is under
load, on the load generator's CPU. Linux lists each thread's children in
/proc/PID/task/TID/children, so walking down from the root reads only the tree. Where the
kernel keeps no such file, psutil's walk."""

import functools
import os
import threading

import psutil


@functools.cache
def kernel_lists_children() -> bool:
    return os.path.exists(f"/proc/self/task/{threading.get_native_id()}/children")


def descendant_pids(pid: int) -> list[int]:
    """Every process below `pid`, parents before their children; empty if it is gone."""
    if not kernel_lists_children():
        try:
            return [child.pid for child in psutil.Process(pid).children(recursive=True)]
        except psutil.Error:
            return []
    found: list[int] = []
    parents = [pid]
    while parents:
        parent = parents.pop(0)
        try:
            threads = os.listdir(f"/proc/{parent}/task")
        except OSError:  # gone meanwhile
            continue
        for thread in threads:
            try:
                with open(f"/proc/{parent}/task/{thread}/children") as listing:
                    children = [int(child) for child in listing.read().split()]
            except OSError:  # the thread ended meanwhile
                continue
            found.extend(children)
            parents.extend(children)
    return found


def tree(pid: int) -> list[psutil.Process]:
    """`pid` and every process below it, root first: psutil.NoSuchProcess if the root is gone;
    a descendant that ends meanwhile is left out."""
    root = psutil.Process(pid)
    processes = [root]
    for child in descendant_pids(pid):
        try:
            processes.append(psutil.Process(child))
        except psutil.Error:
            continue
    return processes


def descendants(pid: int) -> list[psutil.Process]:
    """Every process below `pid` (empty if it is gone)."""
    try:
        return tree(pid)[1:]
    except psutil.Error:
        return []
