"""`./test.sh up`: PostgreSQL with the dataset, every app and the locust web UI, until Ctrl-C."""

import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
from rich.console import Console

from loadtest.lab.apps import start_app
from loadtest.lab.arms import ARMS
from loadtest.lab.database import LabDatabase, provide_database
from loadtest.lab.dataset import load_dataset
from loadtest.lab.errors import LabError
from loadtest.lab.http import http_client
from loadtest.lab.paths import LOADTEST_DIR
from loadtest.lab.processes import (
    child_environment,
    ensure_port_free,
    start_process,
    stop_process,
)
from loadtest.lab.services import RunningApp
from loadtest.load.locust_runs import LOCUST
from loadtest.load.scenarios import SCENARIOS
from loadtest.modes.up.settings import USER_CLASSES, UpSettings
from loadtest.output.text import pydantic_heading

WEB_UI_LOCUSTFILE = Path(__file__).resolve().parent / "locustfile.py"


def run_interactive(settings: UpSettings, console: Console, log_dir: Path) -> None:
    environment = child_environment()
    ensure_port_free(settings.ui_port, "the locust web UI", remedy="or move it with --ui-port PORT")
    for arm in settings.apps:
        ensure_port_free(
            settings.ports[arm],
            ARMS[arm].environment,
            remedy=f"or move {arm} with --port-{arm} PORT",
        )
    with ExitStack() as stack:
        database = provide_database(stack)
        load_dataset(database.url, settings.dataset_size, related_rows=True)
        apps = []
        for app_name in settings.apps:
            app = start_app(
                app_name,
                port=settings.ports[app_name],
                workers=settings.workers,
                database_url=database.url,
                cpus=None,
                log_path=log_dir / f"{ARMS[app_name].environment}.log",
                environment=environment,
            )
            stack.callback(app.stop)
            apps.append(app)
        locust = start_web_ui(settings, apps[0].base_url, log_dir)
        stack.callback(stop_process, locust)
        # Ready means the page answers: locust takes a second or two to serve it.
        wait_for_web_ui(f"http://127.0.0.1:{settings.ui_port}/", locust, log_dir)
        print_where(console, settings, database, apps, log_dir)
        console.print("Press Ctrl-C to stop everything.")
        watched = {ARMS[app.name].environment: app.process for app in apps if app.process}
        watched["locust"] = locust
        while True:
            for name, process in watched.items():
                if process.poll() is not None:
                    raise LabError(f"{name} exited unexpectedly (see {log_dir})")
            time.sleep(0.5)


def start_web_ui(settings: UpSettings, first_url: str, log_dir: Path) -> subprocess.Popen[bytes]:
    """locust's web UI, on the one scenario asked, pointed at the first arm."""
    return start_process(
        [
            str(LOCUST),
            "--config",
            str(LOADTEST_DIR / "locust.conf"),
            "--locustfile",
            str(WEB_UI_LOCUSTFILE),
            "--web-host",
            "127.0.0.1",
            "--web-port",
            str(settings.ui_port),
            "--host",
            first_url,
            "--users",
            str(settings.users),
            "--spawn-rate",
            str(settings.users),
            # The one user class, and no --class-picker: locust 2.47's picker ticks every
            # class of the locustfile whatever the command line names, and a start without
            # a choice runs them all, mixing the scenarios.
            USER_CLASSES[settings.scenario],
        ],
        log_path=log_dir / "locust.log",
        cwd=LOADTEST_DIR,
    )


def print_where(
    console: Console,
    settings: UpSettings,
    database: LabDatabase,
    apps: list[RunningApp],
    log_dir: Path,
) -> None:
    """Where everything is: the database, each app's /docs, and the web UI."""
    console.print(
        f"PostgreSQL {database.server_version} ({database.kind}), "
        f"{settings.dataset_size:,} posts. The apps' and locust's logs are in {log_dir} "
        "(removed on Ctrl-C, kept if something fails)",
        highlight=False,
    )
    for app in apps:
        console.print(
            f"{app.name:<9} {app.base_url}/docs  ({pydantic_heading(app.versions)}, "
            f"FastAPI {app.versions['fastapi']})",
            highlight=False,
        )
    scenario = SCENARIOS[settings.scenario]
    others = "|".join(name for name in USER_CLASSES if name != settings.scenario)
    console.print(
        f"locust web UI: http://127.0.0.1:{settings.ui_port}, loading "
        f"{scenario.label} ({USER_CLASSES[settings.scenario]}: {scenario.request.method} "
        f"{scenario.request.path}) and nothing else; ./test.sh up --scenario {others} for "
        "another.\n  In it, set Host to the app to load ("
        + ", ".join(f"{app.name} {app.base_url}" for app in apps)
        + f"; it starts on {apps[0].name}'s), then the users, and start.",
        highlight=False,
    )


def wait_for_web_ui(
    url: str, locust: subprocess.Popen[bytes], log_dir: Path, timeout_s: float = 60
) -> None:
    deadline = time.monotonic() + timeout_s
    with http_client(timeout=2) as client:
        while time.monotonic() < deadline:
            if locust.poll() is not None:
                raise LabError(f"locust exited during start-up (see {log_dir}/locust.log)")
            try:
                if client.get(url).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
    raise LabError(
        f"the locust web UI did not answer {url} within {timeout_s:.0f}s (see {log_dir})"
    )
