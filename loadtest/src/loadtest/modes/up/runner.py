"""`./test.sh up`: PostgreSQL with the dataset, every app and the locust web UI, until Ctrl-C."""

import time
from contextlib import ExitStack
from pathlib import Path

from rich.console import Console

from loadtest.lab.apps import start_app
from loadtest.lab.arms import ARMS
from loadtest.lab.database import provide_database
from loadtest.lab.dataset import load_dataset
from loadtest.lab.errors import LabError
from loadtest.lab.paths import LOADTEST_DIR
from loadtest.lab.processes import (
    child_environment,
    ensure_port_free,
    start_process,
    stop_process,
)
from loadtest.load.locust_runs import LOCUST
from loadtest.modes.up.settings import UpSettings
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
        load_dataset(database.url, settings.dataset_size)
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
        locust = start_process(
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
                apps[0].base_url,
                "--users",
                str(settings.users),
                "--spawn-rate",
                str(settings.users),
                "--class-picker",
            ],
            log_path=log_dir / "locust.log",
            cwd=LOADTEST_DIR,
        )
        stack.callback(stop_process, locust)
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
        console.print(
            f"locust web UI: http://127.0.0.1:{settings.ui_port}\n"
            "  In it: set Host to the app to load ("
            + ", ".join(f"{app.name} {app.base_url}" for app in apps)
            + f"; it starts on {apps[0].name}'s), and under User classes keep ONE of ReadUser "
            "(READ), SyntheticUser (READ synthetic), WriteUser (WRITE): all three start ticked, "
            "and ticked together they mix the scenarios.",
            highlight=False,
        )
        console.print("Press Ctrl-C to stop everything.")
        watched = {ARMS[app.name].environment: app.process for app in apps if app.process}
        watched["locust"] = locust
        while True:
            for name, process in watched.items():
                if process.poll() is not None:
                    raise LabError(f"{name} exited unexpectedly (see {log_dir})")
            time.sleep(0.5)
