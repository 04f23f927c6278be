"""The skeleton of every mode's run. `open_session` opens the run folder and reads the machine;
the mode then opts into what it uses (pinning, the database, the progress line, the load
generator's calibration, the arms), and everything it started stops on leaving, whatever
happened. `RunSession.finish` then writes results.json, the reports and the printout. A mode's
runner is what lies between: its plan, its verification and its measuring."""

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.lab.apps import RunningApp
from loadtest.lab.arms import arm_named
from loadtest.lab.database import LabDatabase, check_configured_url, provide_database
from loadtest.lab.errors import LabError
from loadtest.lab.host import host_facts, interpreter_text
from loadtest.lab.pinning import PAIRED_LOAD_SIDE, PinningPlan, pin_process_tree, plan_pinning
from loadtest.lab.processes import child_environment, ensure_port_free
from loadtest.lab.progress import ProgressDisplay
from loadtest.lab.startup import StartupSamples, measure_startup
from loadtest.load.calibration import CALIBRATION_S, calibrate_load_generator
from loadtest.load.paired import PairedSetup
from loadtest.load.settings import PairedLoadSettings
from loadtest.modes.registry import DEFAULT_MODE, Mode, mode_of_kind
from loadtest.output.results_file import run_header, write_results
from loadtest.output.run_folder import RunFolder, run_folder
from loadtest.pipeline.measure import startup_seconds
from loadtest.pipeline.repeat import start_arms
from loadtest.pipeline.settings import BenchmarkSettings


def check_local_arms(settings: PairedLoadSettings, move_with: str | None = None) -> None:
    """Before anything is created or started: a malformed DATABASE_URL and a busy port fail
    now, in one line, not minutes later. `move_with`: the option that moves every arm's port,
    in a mode that has no --port-<arm>."""
    check_configured_url()
    for arm in settings.apps:
        ensure_port_free(
            settings.ports[arm],
            arm_named(arm).log_name,
            remedy=f"or move the arms with {move_with}"
            if move_with
            else f"or move {arm} with --port-{arm} PORT",
        )


@dataclass(frozen=True)
class PairedArms:
    """A paired mode's arms, started and answering /health, and what stands behind them: the
    database, the CPUs (as the database left them), the progress line, locust's calibration."""

    database: LabDatabase
    pinning: PinningPlan
    progress: ProgressDisplay
    calibration: dict[str, Any] | None
    apps: dict[str, RunningApp]

    @property
    def setup(self) -> PairedSetup:
        """What the results say of them."""
        versions = {arm: app.versions for arm, app in self.apps.items()}
        return PairedSetup(self.pinning, self.calibration, versions)


class RunSession:
    """One run of a mode, from its folder to its printout. The parts a mode opts into are
    methods; what they start is stopped when the session's `with` block ends."""

    def __init__(
        self,
        mode: Mode,
        folder: RunFolder,
        started_at: datetime,
        host: dict[str, object],
        console: Console,
        stack: ExitStack,
    ) -> None:
        self.mode = mode
        self.folder = folder
        self.started_at = started_at
        self.host = host
        self.console = console
        self.stack = stack
        # For the processes it starts: this process's environment, without its VIRTUAL_ENV.
        self.environment = child_environment()
        self.pinning = plan_pinning(False)
        self.progress: ProgressDisplay | None = None

    @property
    def run_dir(self) -> Path:
        return self.folder.path

    def pin(
        self,
        requested: bool,
        *,
        load_side: tuple[str, ...] = PAIRED_LOAD_SIDE,
        note: str | None = None,
    ) -> PinningPlan:
        """The apps' CPUs and the load side's, said in one line (`note`, where the mode uses
        the plan its own way). With "the runner" on the load side, this process, and so
        everything it starts from now on (locust, PostgreSQL), moves there; without, only
        what the mode pins itself is pinned."""
        self.pinning = plan_pinning(requested, load_side=load_side)
        if note is not None:
            self.pinning = replace(self.pinning, note=note)
        if "the runner" in load_side and self.pinning.enabled:
            os.sched_setaffinity(0, self.pinning.load_cpus)
        self.console.print(f"Pinning: {self.pinning.note}", highlight=False)
        return self.pinning

    def start_database(self) -> LabDatabase:
        """The embedded PostgreSQL (pinned beside the load generator), or the one in
        DATABASE_URL (never pinned: the pinning note is corrected to say so)."""
        database = provide_database(self.stack)
        if database.server_pid and self.pinning.enabled:
            pin_process_tree(database.server_pid, self.pinning.load_cpus)
        elif self.pinning.enabled:
            self.pinning = self.pinning.without(
                "PostgreSQL", "the external PostgreSQL is not pinned"
            )
            self.console.print(f"Pinning, corrected: {self.pinning.note}", highlight=False)
        return database

    def begin_measuring(self) -> None:
        """From here on the run folder stays, whatever happens: it holds evidence. Called when
        the arms are up and their first figure is taken (not before the load generator's
        calibration: a run that dies while starting its arms has measured nothing of them).
        Calling it again changes nothing."""
        self.folder.begin_measuring()

    def show_progress(self, planned_s: float) -> ProgressDisplay:
        self.progress = self.stack.enter_context(ProgressDisplay(planned_s, self.console))
        return self.progress

    def print_database(self, settings: BenchmarkSettings, database: LabDatabase) -> None:
        """PostgreSQL's version and kind, the dataset, the interpreter: one line."""
        self.console.print(
            f"PostgreSQL {database.server_version} ({database.kind}); "
            f"dataset: {settings.dataset_size:,} posts; {interpreter_text(self.host)}",
            highlight=False,
        )

    def measure_startups(
        self, settings: BenchmarkSettings, database: LabDatabase, progress: ProgressDisplay
    ) -> dict[str, StartupSamples]:
        """Fresh starts of every arm, to its first /health, before the load: the run's first
        figures (the folder then holds evidence)."""

        def on_sample() -> None:
            self.begin_measuring()
            progress.tick()

        progress.begin(
            f"start-up · {settings.startup_samples} fresh starts per app", startup_seconds(settings)
        )
        return measure_startup(
            settings.apps,
            samples_per_arm=settings.startup_samples,
            ports=settings.ports,
            workers=settings.workers,
            database_url=database.url,
            cpus=self.pinning.app_cpus if self.pinning.enabled else None,
            log_dir=self.run_dir / "startup",
            environment=self.environment,
            on_sample=on_sample,
        )

    def calibrate(
        self, settings: PairedLoadSettings, output_dir: Path | None = None
    ) -> dict[str, Any]:
        """How fast locust goes against a trivial endpoint served on the apps' CPUs, before any
        arm starts: a floor on the load generator's own ceiling."""
        assert self.progress is not None, "show_progress first: calibration takes seconds"
        directory = output_dir or self.run_dir
        directory.mkdir(parents=True, exist_ok=True)
        return calibrate_load_generator(
            settings, self.pinning, directory, self.progress, CALIBRATION_S, self.environment
        )

    def start_arms(
        self, settings: PairedLoadSettings, database: LabDatabase
    ) -> dict[str, RunningApp]:
        """Every arm of the settings, started in turn, answering /health; each stops when the
        session ends."""
        return start_arms(
            self.stack,
            settings,
            settings.apps,
            database,
            self.pinning,
            self.run_dir,
            self.environment,
        )

    def start_paired_arms(self, settings: PairedLoadSettings, planned_s: float) -> PairedArms:
        """What a mode that loads its arms once does before timing: this process on the load
        side, the database, the progress line, locust calibrated (unless --no-calibration),
        then every arm, and from there on the run folder stays (the benchmark, which starts its
        arms afresh for every repeat, uses the parts)."""
        self.pin(settings.pin)
        database = self.start_database()
        progress = self.show_progress(planned_s)
        calibration = self.calibrate(settings) if settings.calibrate else None
        apps = self.start_arms(settings, database)
        self.begin_measuring()
        return PairedArms(database, self.pinning, progress, calibration, apps)

    def finish(self, results: dict[str, Any]) -> dict[str, Any]:
        """results.json (the header, then the mode's results), the mode's reports, and the
        report in the terminal; returns what results.json holds."""
        header = run_header(self.started_at, datetime.now(UTC), self.host)
        assert self.mode.kind is not None  # open_session opens runs of modes that have one
        document = write_results(self.run_dir, self.mode.kind, header | results)
        try:
            written = self.mode.report.write_reports(self.run_dir, document)
            self.mode.report.print_report(document, self.console)
        except (LabError, OSError):
            raise
        except Exception as error:  # noqa: BLE001 - a figure the report code cannot draw
            # The file was just written by this run: what failed is the report code, so the
            # line says so, and the measured figures are kept.
            detail = str(error).splitlines()[0][:160] if str(error) else ""
            raise LabError(
                f"drawing the reports failed ({type(error).__name__}{': ' if detail else ''}"
                f"{detail}); the run's figures are kept in {self.run_dir}/results.json, and "
                f"./test.sh report {self.run_dir} draws them again"
            ) from error
        names = ["results.json", *(path.name for path in written)]
        self.console.print(
            f"\nWrote {self.run_dir}/{', '.join(names[:-1])} and {names[-1]}", highlight=False
        )
        return document


@contextmanager
def open_session(kind: str, results_dir: Path, console: Console) -> Iterator[RunSession]:
    """A new run folder, results/<UTC timestamp>[-kind]/ (the benchmark's has no suffix), and
    the machine's facts. If the run fails before `begin_measuring`, the folder goes again."""
    mode = mode_of_kind(kind)
    assert mode is not None, f"{kind!r} is no mode's kind (modes/registry.py)"
    started_at = datetime.now(UTC)
    suffix = None if mode.name == DEFAULT_MODE else kind
    with run_folder(results_dir, started_at, suffix) as folder, ExitStack() as stack:
        # First: pinning narrows the CPUs this process sees, and the host facts would say so.
        host = host_facts()
        console.print(f"Results go to {folder.path}", highlight=False)
        yield RunSession(mode, folder, started_at, host, console, stack)
