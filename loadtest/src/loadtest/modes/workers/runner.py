"""`./test.sh workers`: each arm's app served by N worker processes (servers.py), one process
tree at a time, in rotating rounds as scale's processes are, so a slow moment of the machine
lands on every subject alike and a round's figures pair across arms. Per tree (tree.py): the
time until every worker is ready; the memory of the whole tree, idle and again after every route
has run in every worker (routes.py); a worker that restarted fails the tree. Then, per arm, the
largest N the memory predicts for a limit is started inside a cgroup of that limit and loaded
(limit_check.py)."""

import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from loadtest.lab.arms import rotations
from loadtest.lab.dataset import load_dataset
from loadtest.lab.errors import LabError
from loadtest.lab.http import http_get
from loadtest.modes.session import open_session
from loadtest.modes.workers.apps import (
    LAB_DATASET_POSTS,
    AppUnderTest,
    generated_app,
    lab_app,
)
from loadtest.modes.workers.fit import fits_of
from loadtest.modes.workers.limit_check import check_limit
from loadtest.modes.workers.results import build_workers_results
from loadtest.modes.workers.routes import (
    Unfinished,
    collect_in_every_worker,
    every_route_in_every_worker,
)
from loadtest.modes.workers.settings import Target, WorkersSettings
from loadtest.modes.workers.tree import Subject, memory_figures, served, wait_until_ready

KIND = "workers"


def plan_subjects(settings: WorkersSettings) -> list[Subject]:
    return [
        Subject(arm, server, workers)
        for arm in settings.apps
        for server in settings.servers
        for workers in settings.workers
    ]


def measure_tree(
    subject: Subject,
    app: AppUnderTest,
    *,
    port: int,
    cpus: tuple[int, ...] | None,
    log_path: Path,
    bound_s: float,
) -> dict[str, Any]:
    """One tree's figures: ready times, memory idle and after every route in every worker."""
    with served(subject, app, port=port, cpus=cpus, log_path=log_path, bound_s=bound_s) as tree:
        ready = wait_until_ready(tree, subject.workers, bound_s)
        pids = set(ready)
        figures: dict[str, Any] = {
            "ready_s": round(max(ready.values()) - tree.launched, 4),
            "first_ready_s": round(min(ready.values()) - tree.launched, 4),
        }
        figures |= memory_figures(tree.process.pid, pids, "idle")
        try:
            health = http_get(f"{tree.base_url}/health", timeout=bound_s)
            figures["versions"] = health.json()["versions"]
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as error:
            raise Unfinished(f"failed: /health gave no versions ({error})") from None
        began = time.perf_counter()
        figures["warm_requests"], served_by = every_route_in_every_worker(
            tree.base_url, tree.log_path, app.routes, pids, bound_s, subject.key
        )
        # The proof, in results.json: per worker PID, how many of the routes it answered.
        figures["routes"] = len(app.routes)
        figures["routes_answered_by"] = {str(pid): count for pid, count in served_by.items()}
        figures["warm_s"] = round(time.perf_counter() - began, 3)
        figures |= memory_figures(tree.process.pid, pids, "routes")
        collect_in_every_worker(tree.base_url, tree.log_path, pids, bound_s, subject.key)
        figures |= memory_figures(tree.process.pid, pids, "collected")
        restarted = set(tree.ready()) - pids
        if restarted:
            raise Unfinished(f"failed: worker {min(restarted)} started after the first were ready")
        figures["worker_pids"] = sorted(pids)
    return figures


def prepare_lab_database(session: Any, settings: WorkersSettings, cpus: Any) -> str:
    """The run's database with the lab's dataset in it: the schema comes from the app's first
    start (every lab app creates it at import), the posts from the dataset loader."""
    database = session.start_database()
    arm = settings.apps[0]
    with served(
        Subject(arm, "uvicorn", 1),
        lab_app(arm, database.url),
        port=settings.ports[arm],
        cpus=cpus,
        log_path=session.run_dir / "logs" / "lab-schema.log",
        bound_s=settings.bound_s,
    ) as tree:
        wait_until_ready(tree, 1, settings.bound_s)
    load_dataset(database.url, LAB_DATASET_POSTS)
    return str(database.url)


def run_workers(settings: WorkersSettings, console: Console) -> Path:
    subjects = plan_subjects(settings)
    with open_session(KIND, settings.results_dir, console) as session:
        run_dir = session.run_dir
        scratch = Path(
            session.stack.enter_context(tempfile.TemporaryDirectory(prefix="lab-workers-"))
        )
        pinning = session.pin(settings.pin)
        cpus = pinning.app_cpus if pinning.enabled else None
        database_url = ""
        if any(target.lab for target in settings.targets):
            database_url = prepare_lab_database(session, settings, cpus)
        apps: dict[tuple[str, str], AppUnderTest] = {}
        for target in settings.targets:
            for arm in settings.apps:
                apps[(target.name, arm)] = (
                    lab_app(arm, database_url)
                    if target.lab
                    else generated_app(target, arm, settings.seed, scratch)
                )
        console.print(
            f"Subjects: {len(subjects)} ({', '.join(settings.apps)} × "
            f"{', '.join(settings.servers)} × {', '.join(map(str, settings.workers))} workers) "
            f"for {', '.join(target.name for target in settings.targets)}, in "
            f"{settings.rounds} rotating {plural(settings.rounds, 'round')}. A tree over "
            f"{settings.bound_s:g} s to start, or to serve every route in every worker, is "
            "reported as over it and not run again.",
            highlight=False,
        )
        session.begin_measuring()
        samples: list[dict[str, Any]] = []
        for target in settings.targets:
            samples += time_target(settings, target, subjects, apps, cpus, run_dir, console)
        fits = fits_of(settings, samples)
        checks = []
        if settings.check_limit_mib is not None:
            for target in settings.targets[:1]:
                for arm in settings.apps:
                    checks.append(
                        check_limit(
                            settings,
                            target,
                            arm,
                            fits,
                            apps[(target.name, arm)],
                            cpus,
                            run_dir,
                            console,
                        )
                    )
        session.finish(build_workers_results(settings, subjects, samples, fits, checks, pinning))
    return run_dir


def time_target(
    settings: WorkersSettings,
    target: Target,
    subjects: list[Subject],
    apps: dict[tuple[str, str], AppUnderTest],
    cpus: tuple[int, ...] | None,
    run_dir: Path,
    console: Console,
) -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = []
    stopped: dict[str, str] = {}  # subject -> why it is not run again
    began = time.monotonic()
    for number, order in enumerate(rotations(tuple(subjects), settings.rounds)):
        console.print(
            f"[{time.strftime('%H:%M:%S')}] {target.name}: round {number + 1} of "
            f"{settings.rounds}, {len(subjects)} process trees ...",
            highlight=False,
        )
        for subject in order:
            entry: dict[str, Any] = {
                "target": target.name,
                "subject": subject.key,
                "arm": subject.arm,
                "server": subject.server,
                "workers": subject.workers,
                "round": number,
            }
            if subject.key in stopped:
                entry["unfinished"] = stopped[subject.key]
                samples.append(entry)
                continue
            log_name = f"{subject.arm}-{subject.server}-{subject.workers}-r{number}.log"
            try:
                entry |= measure_tree(
                    subject,
                    apps[(target.name, subject.arm)],
                    port=settings.ports[subject.arm],
                    cpus=cpus,
                    log_path=run_dir / "logs" / target.name.replace(" ", "-") / log_name,
                    bound_s=settings.bound_s,
                )
            except Unfinished as why:
                entry["unfinished"] = str(why)
                stopped[subject.key] = f"not run: {why} in round {number + 1}"
                console.print(f"    {subject.key}: {why}", highlight=False)
            samples.append(entry)
        if number == 0:
            print_time_to_go(settings, target, time.monotonic() - began, console)
    if all("unfinished" in sample for sample in samples):
        raise LabError(f"{target.name}: no subject finished in any round: nothing to report")
    return samples


def print_time_to_go(
    settings: WorkersSettings, target: Target, took: float, console: Console
) -> None:
    """After the first round: how long the others will take, and the limit check after them."""
    checks = (
        f", then the limit check ({len(settings.apps)} arms, a minute or more each)"
        if settings.check_limit_mib is not None and target == settings.targets[0]
        else ""
    )
    console.print(
        f"    a round takes about {took:.0f} s: "
        f"{took * (settings.rounds - 1):.0f} s to go for {target.name}{checks}",
        highlight=False,
    )


def plural(count: int, word: str) -> str:
    return word if count == 1 else f"{word}s"
