"""A versions run's generated app: scale's default shape (a service's benign mix of models) at
`generated_models` models, in each arm's idiom, started as fresh processes on every arm of the
series, where model construction's cost shows (Pydantic 2.11 rebuilt it). Only the start
phase is timed, in rounds of rotating order, as the lab app's start-ups are: the import, the
time to the first /health, and idle memory. The first round's processes also check every route's
answer and OpenAPI after their start is timed, so an old minor serves the app it is timed on."""

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.generated.apps import compile_app
from loadtest.generated.generator import ScaleApp, generate
from loadtest.generated.process import Unfinished, measure_process, phases_left_out
from loadtest.generated.shapes import DEFAULT_SHAPE, SHAPES
from loadtest.generated.subjects import Subject, idiom_of
from loadtest.lab.arms import arm_python, rotations
from loadtest.lab.errors import LabError
from loadtest.lab.pinning import PinningPlan
from loadtest.modes.versions.settings import VersionsSettings

# A phase that does not finish within it is a result (its figures are left out), not a hang.
BOUND_S = 60.0
# The start phase alone is timed: the later phases are what the scale mode measures.
START_ONLY = {"routes": "not timed by versions", "openapi": "not timed by versions"}
TIMED = ("import_s", "to_health_s", "rss_idle_mib", "uss_idle_mib")
# For the progress line: a fresh start per model (500 take 4 to 9 s here), and the first
# round's check of every route and OpenAPI about as long again.
SECONDS_PER_MODEL = 0.015
PASSED = "passed"


def generated_seconds(settings: VersionsSettings) -> float:
    """Every arm's rounds, and the first round's check of every route and OpenAPI, for the
    progress line."""
    processes = len(settings.apps) * (settings.generated_rounds + 1)  # + the first's check
    return processes * (1.0 + settings.generated_models * SECONDS_PER_MODEL)


def measure_generated(
    settings: VersionsSettings,
    pinning: PinningPlan,
    run_dir: Path,
    console: Console,
    on_sample: Callable[[], None],
) -> dict[str, Any]:
    """Every arm's figures over its fresh processes: "samples" (one entry per process, with its
    round), "unfinished" (arm -> why a process of it gave no figures: it is not started
    again), "checks" (arm -> "passed", or why its first process's check of every route and
    OpenAPI did not), and "models", the app's size."""
    size = settings.generated_models
    cpus = pinning.app_cpus if pinning.enabled else None
    samples: list[dict[str, Any]] = []
    unfinished: dict[str, str] = {}
    checks: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="lab-versions-") as scratch:
        folders = {
            idiom: generate(ScaleApp(idiom, size), Path(scratch) / f"{idiom}-m{size}")
            for idiom in {idiom_of(arm) for arm in settings.apps}
        }
        for arm in settings.apps:
            compile_app(folders[idiom_of(arm)], arm_python(arm))
        console.print(
            f"[{time.strftime('%H:%M:%S')}] a generated app of {size} models "
            f"(the {DEFAULT_SHAPE} shape: {SHAPES[DEFAULT_SHAPE].summary}) on every arm: one "
            "process each a round, "
            f"{settings.generated_rounds} "
            f"{'round' if settings.generated_rounds == 1 else 'rounds'} of fresh starts, the "
            "first also checking every route's answer and OpenAPI ...",
            highlight=False,
        )

        def sample(arm: str, label: str, verify: bool) -> dict[str, Any]:
            try:
                figures, _ = measure_process(
                    Subject(arm),
                    ScaleApp(idiom_of(arm), size),
                    folders[idiom_of(arm)],
                    port=settings.ports[arm],
                    cpus=cpus,
                    log_path=run_dir / "generated" / f"{arm}-{label}.log",
                    verify=verify,
                    bound_s=BOUND_S,
                    skip=None if verify else START_ONLY,
                )
            except LabError as error:  # an answer other than its model's: not served right
                raise Unfinished(f"failed the check: {error}") from None
            finally:
                on_sample()
            if verify:
                left_out = phases_left_out(figures)
                checks[arm] = "; ".join(f"{p}: {why}" for p, why in left_out.items()) or PASSED
            return figures

        # Round 0 checks each arm's app after timing its start (its later phases are not
        # timed): an arm whose process gives no figures is not started again.
        for number, order in enumerate(rotations(settings.apps, settings.generated_rounds)):
            for arm in order:
                if arm in unfinished:
                    continue
                entry: dict[str, Any] = {"arm": arm, "round": number}
                try:
                    figures = sample(arm, str(number), number == 0)
                    entry |= {metric: figures[metric] for metric in TIMED}
                except Unfinished as why:
                    entry["unfinished"] = unfinished[arm] = str(why)
                    checks.setdefault(arm, str(why))
                    console.print(f"    {arm}: {why}", highlight=False)
                if checks.get(arm, PASSED) != PASSED and number == 0 and arm not in unfinished:
                    console.print(f"    {arm}, checking it: {checks[arm]}", highlight=False)
                samples.append(entry)
    return {
        "models": size,
        "shape": DEFAULT_SHAPE,
        "samples": samples,
        "unfinished": unfinished,
        "checks": checks,
    }
