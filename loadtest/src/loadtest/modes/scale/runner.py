"""`./test.sh scale`: generated apps of one shape (generated/shapes/, written by generator.py)
started as fresh processes, one at a time, in each arm's own environment; per process: the
import of the app module, the time to the first 200 on /health, memory idle, one request to
every route (and the memory after it: FastAPI and Pydantic build some things on first use), the
first /openapi.json. Each phase (start, every route, /openapi.json) may take the bound: one
that takes longer, or fails, is a result ("over 60 s", "failed: RecursionError: ..."), not run
again for that subject; an app that does not start is not run at its larger sizes either.

Every app's bytecode is compiled first, by the interpreter of each arm that runs it, so the
timed processes start as a deployed service does, from bytecode (the environments' libraries
are compiled when ./test.sh syncs them), whatever PYTHONDONTWRITEBYTECODE says. Every app is
verified (every route answers what it should; OpenAPI lists every route) before it is timed.
Then each app size is timed in rounds, the subjects in rotating order within a round, so
a slow moment of the machine lands on every subject alike; a round's figures pair across
subjects for the ratios.
"""

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from loadtest.generated.apps import compile_app, exception_line, normalised
from loadtest.generated.figures import PHASES
from loadtest.generated.generator import MODULE, Route, ScaleApp, generate, routes_of
from loadtest.generated.shapes import SHAPES
from loadtest.generated.subjects import Subject, plan_subjects
from loadtest.lab.apps import RunningApp, start_app
from loadtest.lab.arms import arm_python, rotations
from loadtest.lab.errors import LabError
from loadtest.lab.memory import read_tree_memory
from loadtest.lab.processes import child_environment
from loadtest.lab.startup import HEALTH_POLL_S, import_timing_command, kill_now, read_import_seconds
from loadtest.modes.scale.results import METRICS, build_scale_results
from loadtest.modes.scale.settings import ScaleSettings
from loadtest.modes.session import open_session

KIND = "scale"


def scale_app_of(settings: ScaleSettings, subject: Subject, size: int) -> ScaleApp:
    return ScaleApp(
        subject.idiom,
        size,
        subject.defer_build,
        settings.seed,
        subject.flat,
        settings.shape,
        subject.variant,
    )


def uvicorn_args(port: int) -> list[str]:
    """Plain uvicorn, not lab/apps.py's uvicorn_arguments: that one serves an arm with the lab's
    bounded HTTP protocol from commons, whose import would be counted in every generated app's
    start-up."""
    return [
        MODULE,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-access-log",
        "--log-level",
        "warning",
    ]


def call_every_route(
    client: httpx.Client, routes: list[Route], verify: bool, what: str, deadline: float
) -> None:
    for route in routes:
        response = client.request(
            route.method, route.path, json=route.body, timeout=remaining(deadline)
        )
        if response.status_code != 200:
            raise LabError(
                f"{what}: {route.method} {route.path} answered {response.status_code}, not 200"
            )
        if verify and normalised(response.json()) != normalised(route.expected):
            raise LabError(
                f"{what}: {route.method} {route.path} answered other JSON than its model"
            )


def check_openapi(document: dict[str, Any], routes: list[Route], what: str) -> None:
    paths = document.get("paths", {})
    listed = sum(len(operations) for path, operations in paths.items() if path != "/health")
    if listed != len(routes):
        raise LabError(f"{what}: /openapi.json lists {listed} routes, the app has {len(routes)}")


class Unfinished(Exception):
    """A process that did not give its figures: over the bound, or failed (its error): a
    result of the shape, not a crash of the run."""


def measure_process(
    subject: Subject,
    app: ScaleApp,
    folder: Path,
    *,
    port: int,
    cpus: tuple[int, ...] | None,
    log_path: Path,
    verify: bool,
    bound_s: float,
    skip: dict[str, str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One fresh process of the app: its figures (every one in METRICS), and the versions its
    /health reports. Each phase (start, every route, /openapi.json) may take `bound_s`: a
    phase over it, or failing, leaves its figures None and says why in "unfinished_metrics"
    (and the phases after it are not run); so do the phases in `skip` (phase -> why, from an
    earlier process). Unfinished when the app does not start."""
    what = f"{subject.key}, {app.size} {SHAPES[app.shape].size_label}"
    routes = routes_of(app)
    launched = time.perf_counter()
    running = start_timed(subject, folder, port=port, cpus=cpus, log_path=log_path, bound_s=bound_s)
    figures: dict[str, Any] = dict.fromkeys(METRICS)
    figures["to_health_s"] = time.perf_counter() - launched
    left_out = dict(skip or {})
    try:
        assert running.process is not None
        pid = running.process.pid
        idle = read_tree_memory(pid)
        figures |= {"rss_idle_mib": idle.rss_mib, "uss_idle_mib": idle.uss_mib or 0.0}
        with httpx.Client(base_url=running.base_url) as client:
            phases = Phases(client, routes, verify, what, bound_s, pid, log_path, figures, left_out)
            if "routes" not in left_out:
                phases.every_route()
            if "routes" in left_out:
                left_out.setdefault("openapi", f"not run: {left_out['routes']} on every route")
            if "openapi" not in left_out:
                phases.openapi()
    except httpx.TransportError as error:  # the app died under a request
        raise Unfinished(f"failed: {exception_line(log_path) or error}") from None
    finally:  # Ctrl-C included: the app runs in its own session and would outlive us
        kill_now(running)
    figures["import_s"] = read_import_seconds(log_path)
    unfinished = {metric: why for phase, why in left_out.items() for metric in PHASES[phase]}
    if unfinished:
        figures["unfinished_metrics"] = unfinished
    return figures, running.versions


def start_timed(
    subject: Subject,
    folder: Path,
    *,
    port: int,
    cpus: tuple[int, ...] | None,
    log_path: Path,
    bound_s: float,
) -> RunningApp:
    """The app in `folder` started under the subject's arm, its import timed; Unfinished when
    it takes longer than `bound_s` to answer /health, or fails."""
    launched = time.perf_counter()
    try:
        return start_app(
            subject.arm,
            port=port,
            workers=1,
            database_url="",
            cpus=cpus,
            log_path=log_path,
            environment=child_environment(PYTHONPATH=str(folder)),
            timeout_s=bound_s,
            poll_s=HEALTH_POLL_S,
            command=import_timing_command(arm_python(subject.arm), uvicorn_args(port)),
        )
    except LabError:
        if time.perf_counter() - launched >= bound_s:
            raise Unfinished(f"over {bound_s:g} s") from None
        raise Unfinished(f"failed: {exception_line(log_path)}") from None


@dataclass
class Phases:
    """The phases after start-up, timed on one running process: each puts its figures into
    `figures`, or why it has none into `left_out` (phase -> why)."""

    client: httpx.Client
    routes: list[Route]
    verify: bool
    what: str
    bound_s: float
    pid: int
    log_path: Path
    figures: dict[str, Any]
    left_out: dict[str, str]

    def every_route(self) -> None:
        """Every route called once: the time, and the memory after it."""
        began = time.perf_counter()
        try:
            call_every_route(self.client, self.routes, self.verify, self.what, began + self.bound_s)
        except httpx.TimeoutException:
            self.left_out["routes"] = f"over {self.bound_s:g} s"
            return
        after_routes = read_tree_memory(self.pid)
        self.figures |= {
            "routes_s": time.perf_counter() - began,
            "rss_routes_mib": after_routes.rss_mib,
            "uss_routes_mib": after_routes.uss_mib or 0.0,
        }

    def openapi(self) -> None:
        """/openapi.json asked once: the time, and the memory after it."""
        began = time.perf_counter()
        try:
            response = self.client.get("/openapi.json", timeout=self.bound_s)
        except httpx.TimeoutException:
            self.left_out["openapi"] = f"over {self.bound_s:g} s"
            return
        if response.status_code != 200:
            # The app serves its routes but not its OpenAPI document.
            self.left_out["openapi"] = (
                f"failed: /openapi.json {response.status_code}, "
                f"{exception_line(self.log_path, wait_s=2.0)}"
            )
            return
        self.figures["openapi_s"] = time.perf_counter() - began
        self.figures["rss_openapi_mib"] = read_tree_memory(self.pid).rss_mib
        if self.verify:
            check_openapi(response.json(), self.routes, self.what)


def phases_left_out(figures: dict[str, Any]) -> dict[str, str]:
    """phase -> why, for the phases a process did not finish: the next processes skip them."""
    unfinished = figures.get("unfinished_metrics", {})
    return {
        phase: unfinished[metrics[0]]
        for phase, metrics in PHASES.items()
        if metrics[0] in unfinished
    }


class StoppedPhases:
    """Per subject, the phases that went over the bound (or failed) in verification, and at
    which size: they are not run again at that size's timed processes or at a larger size; a
    smaller size runs them."""

    def __init__(self) -> None:
        self.stopped: dict[str, dict[str, tuple[int, str]]] = {}

    def stop(self, subject: str, phase: str, size: int, reason: str) -> bool:
        """Record it; False if the phase had stopped already (at a smaller size)."""
        phases = self.stopped.setdefault(subject, {})
        if phase in phases:
            return False
        phases[phase] = (size, reason)
        return True

    def at(self, subject: str, size: int) -> dict[str, str]:
        """phase -> why, for the phases a process of the subject at `size` leaves out: at the
        size it stopped at, its own reason; at a larger one, "not run: <reason> at <size>"."""
        return {
            phase: why if stopped_at == size else f"not run: {why} at {stopped_at}"
            for phase, (stopped_at, why) in self.stopped.get(subject, {}).items()
            if stopped_at <= size
        }


def remaining(deadline: float) -> float:
    """Seconds left to the deadline; a request past it times out at once."""
    return max(deadline - time.perf_counter(), 0.001)


def run_scale(settings: ScaleSettings, console: Console) -> Path:
    shape = SHAPES[settings.shape]
    subjects = plan_subjects(settings.apps, settings.defer_build, settings.flat, settings.variants)
    sizes_text = f"{', '.join(map(str, settings.sizes))} {shape.size_label}"
    with open_session(KIND, settings.results_dir, console) as session:
        run_dir = session.run_dir
        scratch = session.stack.enter_context(tempfile.TemporaryDirectory(prefix="lab-scale-"))
        pinning = session.pin(settings.pin, load_side=())  # the apps alone: nothing else runs
        cpus = pinning.app_cpus if pinning.enabled else None
        folders: dict[str, Path] = {}
        for size in settings.sizes:
            for subject in subjects:
                app = scale_app_of(settings, subject, size)
                if app.slug not in folders:
                    folders[app.slug] = generate(app, Path(scratch) / app.slug)
                compile_app(folders[app.slug], arm_python(subject.arm))
        console.print(
            f"Generated apps of the {settings.shape} shape: {sizes_text}, seed {settings.seed}, "
            f"into {scratch} (deleted at the end). Subjects: "
            f"{', '.join(subject.key for subject in subjects)}. A process over "
            f"{settings.bound_s:g} s is reported as over it, and its subject's larger sizes are "
            "skipped.",
            highlight=False,
        )

        def sample(
            subject: Subject, size: int, label: str, verify: bool, skip: dict[str, str]
        ) -> tuple[dict[str, Any], dict[str, Any]]:
            app = scale_app_of(settings, subject, size)
            return measure_process(
                subject,
                app,
                folders[app.slug],
                port=settings.ports[subject.arm],
                cpus=cpus,
                log_path=run_dir / "logs" / f"{subject.key}-m{size}-{label}.log",
                verify=verify,
                bound_s=settings.bound_s,
                skip=skip,
            )

        versions, unfinished, stopped_phases = verify_every_app(settings, subjects, sample, console)
        session.begin_measuring()
        samples = time_every_size(settings, subjects, sample, console, unfinished, stopped_phases)
    session.finish(build_scale_results(settings, subjects, samples, versions, unfinished, pinning))
    return run_dir


# What run_scale's sample() takes: the subject, the size, its log's label, whether to verify
# every answer, and the phases to skip; it answers the process's figures and its versions.
Sampler = Callable[[Subject, int, str, bool, dict[str, str]], tuple[dict[str, Any], dict[str, Any]]]


def verify_every_app(
    settings: ScaleSettings, subjects: list[Subject], sample: Sampler, console: Console
) -> tuple[dict[str, dict[str, Any]], dict[tuple[str, int], str], StoppedPhases]:
    """A fresh process of every subject at every size, every answer checked: each subject's
    versions, why a (subject, size) gives no figures, and the phases each subject stopped in."""
    shape = SHAPES[settings.shape]
    processes = settings.plan.processes
    console.print(
        f"[{time.strftime('%H:%M:%S')}] verifying every app ({len(subjects)} subjects × "
        f"{len(settings.sizes)} sizes, a fresh process each): every route answers its "
        "model, OpenAPI lists every route ...",
        highlight=False,
    )
    versions: dict[str, dict[str, Any]] = {}
    unfinished: dict[tuple[str, int], str] = {}  # (subject, size) -> why no figures
    stopped_phases = StoppedPhases()
    for size in settings.sizes:
        verifying = time.monotonic()
        for subject in subjects:
            stopped = [done for (key, done) in unfinished if key == subject.key and done < size]
            if stopped:
                unfinished[(subject.key, size)] = f"not run: unfinished at {stopped[0]}"
                continue
            try:
                figures, versions[subject.key] = sample(
                    subject, size, "verify", True, stopped_phases.at(subject.key, size)
                )
            except Unfinished as why:
                unfinished[(subject.key, size)] = str(why)
                console.print(f"    {subject.key} at {size}: {why}", highlight=False)
                continue
            for phase, reason in phases_left_out(figures).items():
                if stopped_phases.stop(subject.key, phase, size, reason):
                    console.print(
                        f"    {subject.key} at {size}, {phase}: {reason}", highlight=False
                    )
        # A verifying process does what a timed one does, and checks the answers too: the
        # size's timed rounds take about as long, once per round.
        took = time.monotonic() - verifying
        console.print(
            f"    {size} {shape.size_label} verified in {took:.0f} s: its "
            f"{plural(processes, 'timed round')} will take about {took * processes:.0f} s",
            highlight=False,
        )
    if len(unfinished) == len(subjects) * len(settings.sizes):
        raise LabError("no subject finished at any size: nothing to time")
    return versions, unfinished, stopped_phases


def time_every_size(
    settings: ScaleSettings,
    subjects: list[Subject],
    sample: Sampler,
    console: Console,
    unfinished: dict[tuple[str, int], str],
    stopped_phases: StoppedPhases,
) -> list[dict[str, Any]]:
    """The timed rounds, size by size: in each, a fresh process of every subject that
    finished verification, in rotating order."""
    shape = SHAPES[settings.shape]
    processes = settings.plan.processes
    samples: list[dict[str, Any]] = []
    for size in settings.sizes:
        began = time.monotonic()
        timed = tuple(s for s in subjects if (s.key, size) not in unfinished)
        console.print(
            f"[{time.strftime('%H:%M:%S')}] {size} {shape.size_label}: {processes} "
            f"{plural(processes, 'round')} of {len(timed)} fresh "
            f"{plural(len(timed), 'process', 'processes')} ...",
            highlight=False,
        )
        for round_number, order in enumerate(rotations(timed, processes)):
            for subject in order:
                entry: dict[str, Any] = {
                    "subject": subject.key,
                    "models": size,
                    "round": round_number,
                }
                try:
                    entry |= sample(
                        subject,
                        size,
                        f"{round_number}",
                        False,
                        stopped_phases.at(subject.key, size),
                    )[0]
                except Unfinished as why:
                    entry["unfinished"] = str(why)
                samples.append(entry)
        console.print(f"    done in {time.monotonic() - began:.0f}s", highlight=False)
    return samples


def plural(count: int, word: str, words: str | None = None) -> str:
    return word if count == 1 else (words or f"{word}s")
