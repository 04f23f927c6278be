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
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.generated.apps import compile_app
from loadtest.generated.generator import ScaleApp, generate
from loadtest.generated.process import Unfinished, measure_process, phases_left_out
from loadtest.generated.shapes import SHAPES
from loadtest.generated.subjects import Subject, plan_subjects
from loadtest.lab.arms import arm_python, rotations
from loadtest.lab.errors import LabError
from loadtest.modes.scale.results import build_scale_results
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
