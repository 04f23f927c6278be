"""`./test.sh scale`: generated apps of M models (modes/scale/generator.py) started as fresh
processes, one at a time, in each arm's own environment; per process: the import of the app
module, the time to the first 200 on /health, memory idle, one request to every route (and the
memory after it: FastAPI and Pydantic build some things on first use), the first /openapi.json.

Every app's bytecode is compiled first, by the interpreter of each arm that runs it, so the
timed processes start as a deployed service does, from bytecode (the environments' libraries
are compiled when ./test.sh syncs them), whatever PYTHONDONTWRITEBYTECODE says. Every app is
verified (every route answers what it should; OpenAPI lists every route) before it is timed.
Then each app size is timed in rounds, the subjects in rotating order within a round, so
a slow moment of the machine lands on every subject alike; a round's figures pair across
subjects for the ratios.
"""

import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from loadtest.lab.apps import RunningApp, start_app
from loadtest.lab.arms import arm_python, rotations
from loadtest.lab.errors import LabError
from loadtest.lab.memory import read_tree_memory
from loadtest.lab.processes import child_environment
from loadtest.lab.startup import HEALTH_POLL_S, import_timing_command, kill_now, read_import_seconds
from loadtest.modes.scale.generator import MODULE, Route, ScaleApp, generate, routes_of
from loadtest.modes.scale.results import METRICS, build_scale_results
from loadtest.modes.scale.settings import ScaleSettings
from loadtest.modes.scale.subjects import Subject, plan_subjects
from loadtest.modes.session import open_session

KIND = "scale"
START_TIMEOUT_S = 120  # the biggest app on a slow machine; a hang still ends
REQUEST_TIMEOUT_S = 60  # the first /openapi.json of the biggest app builds every schema


def scale_app_of(subject: Subject, models: int, seed: int) -> ScaleApp:
    return ScaleApp(subject.idiom, models, subject.defer_build, seed, subject.flat)


def compile_app(folder: Path, python: Path) -> None:
    """Write the app's bytecode (compileall writes it even under PYTHONDONTWRITEBYTECODE)."""
    result = subprocess.run(
        [str(python), "-m", "compileall", "-q", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        lines = (result.stdout + result.stderr).strip().splitlines() or ["no output"]
        raise LabError(f"cannot compile the generated app in {folder}: {lines[-1]}")


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


def normalised(value: Any) -> Any:
    """JSON with UTC written one way: Pydantic 1 writes `+00:00`, Pydantic 2 `Z`."""
    if isinstance(value, dict):
        return {key: normalised(item) for key, item in value.items()}
    if isinstance(value, list):
        return [normalised(item) for item in value]
    if isinstance(value, str) and value.endswith("Z") and "T" in value:
        return value[:-1] + "+00:00"
    return value


def call_every_route(client: httpx.Client, routes: list[Route], verify: bool, what: str) -> None:
    for route in routes:
        response = client.request(route.method, route.path, json=route.body)
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


def measure_process(
    subject: Subject,
    app: ScaleApp,
    folder: Path,
    *,
    port: int,
    cpus: tuple[int, ...] | None,
    log_path: Path,
    verify: bool,
) -> tuple[dict[str, float], dict[str, Any]]:
    """One fresh process of the app: its figures (every one in METRICS), and the versions its
    /health reports."""
    what = f"{subject.key}, {app.models} models"
    routes = routes_of(app)
    launched = time.perf_counter()
    running: RunningApp = start_app(
        subject.arm,
        port=port,
        workers=1,
        database_url="",
        cpus=cpus,
        log_path=log_path,
        environment=child_environment(PYTHONPATH=str(folder)),
        timeout_s=START_TIMEOUT_S,
        poll_s=HEALTH_POLL_S,
        command=import_timing_command(arm_python(subject.arm), uvicorn_args(port)),
    )
    try:
        figures = {"to_health_s": time.perf_counter() - launched}
        assert running.process is not None
        pid = running.process.pid
        idle = read_tree_memory(pid)
        with httpx.Client(base_url=running.base_url, timeout=REQUEST_TIMEOUT_S) as client:
            began = time.perf_counter()
            call_every_route(client, routes, verify, what)
            figures["routes_s"] = time.perf_counter() - began
            after_routes = read_tree_memory(pid)
            began = time.perf_counter()
            response = client.get("/openapi.json")
            figures["openapi_s"] = time.perf_counter() - began
            if response.status_code != 200:
                raise LabError(f"{what}: /openapi.json answered {response.status_code}")
            if verify:
                check_openapi(response.json(), routes, what)
            after_openapi = read_tree_memory(pid)
    finally:  # Ctrl-C included: the app runs in its own session and would outlive us
        kill_now(running)
    figures |= {
        "import_s": read_import_seconds(log_path),
        "rss_idle_mib": idle.rss_mib,
        "uss_idle_mib": idle.uss_mib or 0.0,
        "rss_routes_mib": after_routes.rss_mib,
        "uss_routes_mib": after_routes.uss_mib or 0.0,
        "rss_openapi_mib": after_openapi.rss_mib,
    }
    assert set(figures) == set(METRICS), "a figure is missing or unnamed"
    return figures, running.versions


def run_scale(settings: ScaleSettings, console: Console) -> Path:
    subjects = plan_subjects(settings.apps, settings.defer_build, settings.flat)
    processes = settings.plan.processes
    with open_session(KIND, settings.results_dir, console) as session:
        run_dir = session.run_dir
        scratch = session.stack.enter_context(tempfile.TemporaryDirectory(prefix="lab-scale-"))
        pinning = session.pin(settings.pin, load_side=())  # the apps alone: nothing else runs
        cpus = pinning.app_cpus if pinning.enabled else None
        folders: dict[str, Path] = {}
        for models in settings.models:
            for subject in subjects:
                app = scale_app_of(subject, models, settings.seed)
                if app.slug not in folders:
                    folders[app.slug] = generate(app, Path(scratch) / app.slug)
                compile_app(folders[app.slug], arm_python(subject.arm))
        console.print(
            f"Generated apps: {', '.join(str(m) for m in settings.models)} models (two routes "
            f"each, ten models per router), seed {settings.seed}, into {scratch} (deleted at "
            f"the end). Subjects: {', '.join(subject.key for subject in subjects)}.",
            highlight=False,
        )

        def sample(
            subject: Subject, models: int, label: str, verify: bool
        ) -> tuple[dict[str, float], dict[str, Any]]:
            app = scale_app_of(subject, models, settings.seed)
            return measure_process(
                subject,
                app,
                folders[app.slug],
                port=settings.ports[subject.arm],
                cpus=cpus,
                log_path=run_dir / "logs" / f"{subject.key}-m{models}-{label}.log",
                verify=verify,
            )

        console.print(
            f"[{time.strftime('%H:%M:%S')}] verifying every app: every route answers its "
            "model, OpenAPI lists every route ...",
            highlight=False,
        )
        versions = {}
        for models in settings.models:
            for subject in subjects:
                _, versions[subject.key] = sample(subject, models, "verify", verify=True)
        session.begin_measuring()
        samples: list[dict[str, Any]] = []
        for models in settings.models:
            began = time.monotonic()
            console.print(
                f"[{time.strftime('%H:%M:%S')}] {models} models: {processes} rounds of "
                f"{len(subjects)} fresh processes ...",
                highlight=False,
            )
            for round_number, order in enumerate(rotations(tuple(subjects), processes)):
                for subject in order:
                    figures, _ = sample(subject, models, f"{round_number}", verify=False)
                    samples.append(
                        {"subject": subject.key, "models": models, "round": round_number} | figures
                    )
            console.print(f"    done in {time.monotonic() - began:.0f}s", highlight=False)
    session.finish(build_scale_results(settings, subjects, samples, versions, pinning))
    return run_dir
