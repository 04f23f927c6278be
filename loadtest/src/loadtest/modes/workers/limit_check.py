"""The fit's check (fit.py): the largest N it predicts for an arm in a memory limit, under the
server that fits the most, started inside a cgroup of that limit (lab/cgroup.py: what a
container's limit is, charging page cache and socket buffers too), every route run in every
worker, then loaded for a few seconds. It stays up when no worker was killed or restarted and
every request was answered as it should be."""

import time
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.lab.cgroup import create_memory_cgroup
from loadtest.lab.errors import LabError
from loadtest.modes.workers.apps import AppUnderTest
from loadtest.modes.workers.fit import best_choice
from loadtest.modes.workers.routes import (
    Unfinished,
    collect_in_every_worker,
    every_route_in_every_worker,
    load_routes,
)
from loadtest.modes.workers.settings import MAX_WORKERS, Target, WorkersSettings
from loadtest.modes.workers.tree import Subject, memory_figures, served, wait_until_ready


def check_limit(
    settings: WorkersSettings,
    target: Target,
    arm: str,
    fits: dict[str, dict[str, Any]],
    app: AppUnderTest,
    cpus: tuple[int, ...] | None,
    run_dir: Path,
    console: Console,
) -> dict[str, Any]:
    limit = settings.check_limit_mib
    assert limit is not None
    result: dict[str, Any] = {"target": target.name, "arm": arm, "limit_mib": limit}
    best = best_choice(fits[target.name], arm, limit)
    if best is None or best[1] == 0:
        result["outcome"] = (
            f"not run: no worker fits in {limit} MiB by the fit"
            if best
            else "not run: no fit (it needs every worker count of at least two finished)"
        )
        console.print(f"Limit check, {arm}: {result['outcome']}", highlight=False)
        return result
    server, predicted = best
    workers = min(predicted, MAX_WORKERS)
    result |= {"server": server, "predicted": predicted, "workers": workers}
    console.print(
        f"[{time.strftime('%H:%M:%S')}] limit check, {arm}: {workers} workers under {server} "
        f"in a {limit} MiB cgroup"
        + (
            f" (the fit says {predicted}; at most {MAX_WORKERS} are started)"
            if workers < predicted
            else ""
        )
        + f", every route in every worker, then {settings.load_s:g} s of load ...",
        highlight=False,
    )
    try:
        cgroup = create_memory_cgroup("lab-workers", limit)
    except LabError as error:
        result["outcome"] = f"not run: {error}"
        console.print(f"    {result['outcome']}", highlight=False)
        return result
    subject = Subject(arm, server, workers)
    try:
        with served(
            subject,
            app,
            port=settings.ports[arm],
            cpus=cpus,
            log_path=run_dir / "logs" / f"limit-{arm}-{server}-{workers}.log",
            bound_s=settings.bound_s,
            cgroup=cgroup,
        ) as tree:
            ready = wait_until_ready(tree, workers, settings.bound_s)
            result["ready_s"] = round(max(ready.values()) - tree.launched, 3)
            every_route_in_every_worker(
                tree.base_url, tree.log_path, app.routes, set(ready), settings.bound_s, subject.key
            )
            collect_in_every_worker(
                tree.base_url, tree.log_path, set(ready), settings.bound_s, subject.key
            )
            load = load_routes(tree.base_url, app.routes, max(4, workers), settings.load_s)
            result |= load
            result |= memory_figures(tree.process.pid, set(ready), "loaded")
            result["usage_mib"] = round(cgroup.usage_mib(), 1)
            result["restarted"] = len(set(tree.ready()) - set(ready))
            result["alive"] = tree.process.poll() is None
    except Unfinished as why:
        result["failure"] = str(why)
    finally:
        result["oom_kills"] = cgroup.oom_kills()
        peak = cgroup.peak_mib()
        result["peak_mib"] = round(peak, 1) if peak is not None else None
        cgroup.remove()
    stayed_up = (
        "failure" not in result
        and result["alive"]
        and result["restarted"] == 0
        and result["oom_kills"] == 0
        and result["failed"] == 0
    )
    result["outcome"] = "stayed up" if stayed_up else "did not stay up"
    console.print(f"    {outcome_line(result)}", highlight=False)
    return result


def outcome_line(check: dict[str, Any]) -> str:
    if "server" not in check or check["outcome"].startswith("not run"):
        return f"{check['arm']}: {check['outcome']}"
    parts = [
        f"{check['arm']}, {check['workers']} workers under {check['server']} in "
        f"{check['limit_mib']} MiB: {check['outcome']}"
    ]
    if "failure" in check:
        parts.append(check["failure"])
    else:
        parts.append(
            f"{check['answered']} requests answered, {check['failed']} not"
            + (f" (first: {check['first_failure']})" if check["first_failure"] else "")
        )
        parts.append(f"{check['restarted']} workers restarted")
    parts.append(f"{check['oom_kills']} killed by the limit")
    if check.get("peak_mib") is not None:
        parts.append(f"the cgroup's peak {check['peak_mib']:.0f} MiB")
    return "; ".join(parts)
