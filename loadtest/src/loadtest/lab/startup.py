"""Start-up cost per arm: fresh processes timed from launch to the first 200 on /health, and,
inside each, how long importing the app module took.

Every sample is a new interpreter on the app CPUs, exactly as the benchmark starts an arm,
except that a few lines run first: they time `import <app module>` (which builds the app: its
routes, schemas and first database connection) and then hand over to uvicorn's own command
line, which finds the module already imported. Arms take turns in rotating order, so a slow
moment of the machine does not land on one arm's samples only.
"""

import os
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from loadtest.lab.apps import RunningApp, start_app, uvicorn_arguments
from loadtest.lab.arms import arm_named, arm_python, rotations
from loadtest.lab.errors import LabError
from loadtest.lab.processes import descendants, escaped, kill_all

HEALTH_POLL_S = 0.01  # the to-health figure's resolution
IMPORT_LINE = re.compile(r"^lab-import-s=([0-9.]+)$", re.MULTILINE)
IMPORT_TIMING = """\
import sys, time
started = time.perf_counter()
import {module}
print(f"lab-import-s={{time.perf_counter() - started:.6f}}", file=sys.stderr, flush=True)
import uvicorn.main
uvicorn.main.main()  # reads sys.argv[1:]: the benchmark's own uvicorn arguments
"""
SECONDS_PER_SAMPLE = 1.6  # for the progress line: start-up, then an immediate SIGKILL


@dataclass
class StartupSamples:
    to_health_s: list[float] = field(default_factory=list)
    import_s: list[float] = field(default_factory=list)


def timed_start_command(arm: str, port: int, workers: int) -> list[str]:
    return import_timing_command(arm_python(arm), uvicorn_arguments(arm, port, workers))


def import_timing_command(python: Path, uvicorn_args: list[str]) -> list[str]:
    """uvicorn's command line (its first argument: the `module:app` it serves), preceded by
    timing the import of that module; read_import_seconds reads the time from the log."""
    module = uvicorn_args[0].partition(":")[0]
    return [str(python), "-c", IMPORT_TIMING.format(module=module), *uvicorn_args]


def read_import_seconds(log_path: Path) -> float:
    match = IMPORT_LINE.search(log_path.read_text(errors="replace"))
    if match is None:
        raise LabError(f"{log_path} holds no import time (the app did not report it)")
    return float(match.group(1))


def kill_now(app: RunningApp) -> None:
    """A sample is done at its first /health: no graceful shutdown to wait for."""
    assert app.process is not None
    started = descendants(app.process.pid)  # before they are orphaned
    try:
        os.killpg(app.process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    app.process.wait()
    kill_all(started + escaped(app.process))  # and what escaped the tree (lab/processes.py)


def measure_startup(
    apps: tuple[str, ...],
    *,
    samples_per_arm: int,
    ports: dict[str, int],
    workers: int,
    database_url: str,
    cpus: tuple[int, ...] | None,
    log_dir: Path,
    environment: dict[str, str],
    on_sample: Callable[[], None] = lambda: None,
) -> dict[str, StartupSamples]:
    """`samples_per_arm` fresh starts of every arm, one at a time, each stopped at once."""
    samples = {arm: StartupSamples() for arm in apps}
    for number, order in enumerate(rotations(apps, samples_per_arm), 1):
        for arm in order:
            port = ports[arm]
            log_path = log_dir / f"{arm_named(arm).log_name}.{number}.log"
            launched = time.perf_counter()
            app = start_app(
                arm,
                port=port,
                workers=workers,
                database_url=database_url,
                cpus=cpus,
                log_path=log_path,
                environment=environment,
                poll_s=HEALTH_POLL_S,
                command=timed_start_command(arm, port, workers),
            )
            try:
                answered = time.perf_counter()
            finally:  # Ctrl-C included: the app runs in its own session and would outlive us
                kill_now(app)
            samples[arm].to_health_s.append(answered - launched)
            samples[arm].import_s.append(read_import_seconds(log_path))
            on_sample()
    return samples
