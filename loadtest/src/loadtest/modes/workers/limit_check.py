"""The fit's check (fit.py): the largest N it predicts for an arm in a memory limit, under the
server that fits the most, started inside a cgroup of that limit (lab/cgroup.py: what a
container's limit is, charging page cache, page tables and socket buffers too), every route and a
full collection run in every worker, then loaded for a few seconds. It stays up when no worker
was killed or restarted and every request was answered with the status it should have; where
it does not, one worker fewer is tried, twice at most. An attempt over the bound (too slow to
serve every route in every worker) says nothing of memory: it ends the check, as unfinished."""

import time
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.lab.cgroup import create_memory_cgroup
from loadtest.lab.errors import LabError
from loadtest.modes.workers.apps import AppUnderTest
from loadtest.modes.workers.fit import best_choice
from loadtest.modes.workers.report import attempt_line
from loadtest.modes.workers.routes import (
    Unfinished,
    collect_in_every_worker,
    every_route_in_every_worker,
    load_routes,
)
from loadtest.modes.workers.settings import MAX_WORKERS, Target, WorkersSettings
from loadtest.modes.workers.tree import Subject, memory_figures, served, wait_until_ready

STEPS_DOWN = 2  # tries below the prediction when it does not stay up


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
    """The prediction for the arm, under the server that fits the most, tried under the limit;
    where it does not stay up, one worker fewer, up to STEPS_DOWN times: `held` is the most that
    stayed up (None if none did)."""
    limit = settings.check_limit_mib
    assert limit is not None
    result: dict[str, Any] = {"target": target.name, "arm": arm, "limit_mib": limit}
    best = best_choice(fits[target.name], arm, limit)
    if best is None or best[1] == 0:
        whys = [fit["why"] for fit in fits[target.name].values() if fit["arm"] == arm]
        result["outcome"] = (
            f"not run: no worker fits in {limit} MiB by the fit"
            if best
            else f"not run: {whys[0] if whys else 'no fit'}"
        )
        console.print(f"Limit check, {arm}: {result['outcome']}", highlight=False)
        return result
    server, predicted = best
    result |= {"server": server, "predicted": predicted, "attempts": [], "held": None}
    first = min(predicted, MAX_WORKERS)
    for workers in range(first, max(first - STEPS_DOWN - 1, 0), -1):
        console.print(
            f"[{time.strftime('%H:%M:%S')}] limit check, {arm}: {workers} workers under "
            f"{server} in a {limit} MiB cgroup"
            + (
                f" (the fit says {predicted}; at most {MAX_WORKERS})"
                if predicted > MAX_WORKERS
                else ""
            )
            + f", every route and a collection in every worker, then {settings.load_s:g} s of "
            "load ...",
            highlight=False,
        )
        try:
            attempt = try_under_limit(settings, arm, server, workers, app, cpus, run_dir)
        except LabError as error:  # no cgroup can be made here
            result["outcome"] = f"not run: {error}"
            console.print(f"    {result['outcome']}", highlight=False)
            return result
        result["attempts"].append(attempt)
        console.print(f"    {attempt_line(attempt)}", highlight=False)
        if attempt["outcome"] == "stayed up":
            result["held"] = workers
        if attempt["outcome"] != "did not stay up":
            break
    result["outcome"] = outcome_of(result)
    return result


def outcome_of(check: dict[str, Any]) -> str:
    held, predicted = check["held"], check["predicted"]
    last = check["attempts"][-1]
    if last["outcome"] == "unfinished":
        return f"unfinished at {last['workers']} workers: {last['failure']}"
    if held is not None and held == min(predicted, MAX_WORKERS):
        return "stayed up"
    tried = [attempt["workers"] for attempt in check["attempts"]]
    if held is None:
        return f"did not stay up at {', '.join(map(str, tried))} workers"
    return (
        f"did not stay up at {tried[0]}"
        + (f"–{tried[-2]}" if len(tried) > 2 else "")
        + f"; stayed up at {held}"
    )


def try_under_limit(
    settings: WorkersSettings,
    arm: str,
    server: str,
    workers: int,
    app: AppUnderTest,
    cpus: tuple[int, ...] | None,
    run_dir: Path,
) -> dict[str, Any]:
    limit = settings.check_limit_mib
    assert limit is not None
    cgroup = create_memory_cgroup("lab-workers", limit)
    subject = Subject(arm, server, workers)
    attempt: dict[str, Any] = {"workers": workers}
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
            attempt["ready_s"] = round(max(ready.values()) - tree.launched, 3)
            every_route_in_every_worker(
                tree.base_url, tree.log_path, app.routes, set(ready), settings.bound_s, subject.key
            )
            collect_in_every_worker(
                tree.base_url, tree.log_path, set(ready), settings.bound_s, subject.key
            )
            attempt |= load_routes(tree.base_url, app.routes, max(4, workers), settings.load_s)
            attempt |= memory_figures(tree.process.pid, set(ready), "loaded")
            attempt["usage_mib"] = round(cgroup.usage_mib(), 1)
            attempt["restarted"] = len(set(tree.ready()) - set(ready))
            attempt["alive"] = tree.process.poll() is None
    except Unfinished as why:
        attempt["failure"] = str(why)
    finally:
        attempt["oom_kills"] = cgroup.oom_kills()
        peak = cgroup.peak_mib()
        attempt["peak_mib"] = round(peak, 1) if peak is not None else None
        cgroup.remove()
    stayed_up = (
        "failure" not in attempt
        and attempt["alive"]
        and attempt["restarted"] == 0
        and attempt["oom_kills"] == 0
        and attempt["failed"] == 0
    )
    if stayed_up:
        attempt["outcome"] = "stayed up"
    elif attempt.get("failure", "").startswith("over") and attempt["oom_kills"] == 0:
        attempt["outcome"] = "unfinished"  # the bound, not the limit: says nothing of memory
    else:
        attempt["outcome"] = "did not stay up"
    return attempt
