"""One fresh process of a generated app (generator.py), measured phase by phase (figures.py's
PHASES): the import of its module, the time to the first 200 on /health, memory idle, one
request to every route and the memory after it, the first /openapi.json. Each phase may take
the bound: one that takes longer, or fails, is a result ("over 60 s", "failed: RecursionError:
..."), not a crash. The scale mode times these in rounds; the versions mode times the start
phase on every Pydantic minor."""

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from loadtest.generated.apps import exception_line, normalised
from loadtest.generated.figures import METRICS, PHASES
from loadtest.generated.generator import MODULE, Route, ScaleApp, routes_of
from loadtest.generated.shapes import SHAPES
from loadtest.generated.subjects import Subject
from loadtest.lab.apps import RunningApp, start_app
from loadtest.lab.arms import arm_python
from loadtest.lab.errors import LabError
from loadtest.lab.http import http_client
from loadtest.lab.memory import read_tree_memory
from loadtest.lab.processes import child_environment
from loadtest.lab.startup import HEALTH_POLL_S, import_timing_command, kill_now, read_import_seconds


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
        with http_client(base_url=running.base_url) as client:
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


def remaining(deadline: float) -> float:
    """Seconds left to the deadline; a request past it times out at once."""
    return max(deadline - time.perf_counter(), 0.001)
