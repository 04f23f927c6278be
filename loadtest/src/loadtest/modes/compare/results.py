"""A compare run's results.json (docs/results.md): the benchmark's, for the file's arms and
scenarios, with what the file declared and where the arms' answers differed."""

from collections.abc import Sequence
from typing import Any

from loadtest.analysis.fit import Timetable
from loadtest.lab.pinning import PinningPlan
from loadtest.lab.startup import StartupSamples
from loadtest.modes.compare.settings import CompareSettings
from loadtest.modes.compare.stopping import Stopping
from loadtest.pipeline.records import ArmLife, ScenarioRun
from loadtest.pipeline.results import build_results


def build_compare_results(
    *,
    settings: CompareSettings,
    lives: list[ArmLife],
    runs: list[ScenarioRun],
    calibration: dict[str, Any] | None,
    startup: dict[str, StartupSamples] | None,
    database: dict[str, Any] | None,
    pinning: PinningPlan,
    differences: dict[str, dict[str, list[str]]],
    stopping: Stopping,
    timetables: dict[str, Timetable],
) -> dict[str, Any]:
    """What results.json holds after its header: the benchmark's figures, the file, how the
    run stopped adding repeats (and each ratio, whether it had the repeats it needed), and the
    differences --allow-different let through (each one a flag)."""
    assert settings.file is not None
    results = build_results(
        settings=settings,
        lives=lives,
        runs=runs,
        calibration=calibration,
        startup=startup,
        database=database,  # type: ignore[arg-type]
        pinning=pinning,
        timetables=timetables,
    )
    results["settings"] |= file_settings(settings)
    flags = [
        f"{settings.plan.scenario(name).label}: {arm}'s answer differs from the baseline's at "
        f"{lines[0]}"
        + (f" (and {len(lines) - 1} more)" if len(lines) > 1 else "")
        + " (timed anyway: --allow-different)"
        for name, per_arm in differences.items()
        for arm, lines in per_arm.items()
    ]
    terms = terms_flags(settings, pinning, lives)
    if terms:  # an unpinned arm on the app CPUs is no "other program": its own flag says why
        results["flags"] = [flag for flag in results["flags"] if FOREIGN_CPU not in flag]
        for figures in results["apps"].values():
            for scenario in figures["scenarios"].values():
                scenario["flags"] = [flag for flag in scenario["flags"] if FOREIGN_CPU not in flag]
    flags += terms
    results["stopping"] = stopping.as_dict()
    flags += stopping_results(settings, stopping, results)
    results["differences"] = differences
    results["flags"] = flags + results["flags"]
    return results


def file_settings(settings: CompareSettings) -> dict[str, Any]:
    """What results.json's settings add for a compare run: the file, its services and the
    request each scenario sends."""
    assert settings.file is not None
    plan = settings.file.plan
    return {
        "file": str(settings.file.path),
        "normalisations": list(settings.file.normalisations),
        "allow_different": settings.allow_different,
        "services": {
            service.name: {
                "label": service.label,
                "command": list(service.command) if service.command else None,
                "cwd": str(service.cwd) if service.cwd else None,
                "url": service.base_url,
                "health": service.health_path,
                "started_here": service.started_here,
                "own_process": settings.arm_options[service.name].own_process,
                # A derived arm's (`from`, `with`): its base, pins, interpreter and versions.
                **(
                    {"environment": settings.file.environments[service.name]}
                    if service.name in settings.file.environments
                    else {}
                ),
            }
            for service in plan.services
        },
        "requests": {
            scenario.name: {
                "method": scenario.request.method,
                "path": scenario.path,
                "status": scenario.request.status,
                "vary": list(scenario.vary),
            }
            for scenario in plan.scenarios
        },
    }


def stopping_results(
    settings: CompareSettings, stopping: Stopping, results: dict[str, Any]
) -> list[str]:
    """Each ratio told whether it had the repeats it needed (in `results`, in place), and the
    flags of how the run stopped adding repeats: a pilot over the budget, or the budget."""
    flags: list[str] = []
    baseline = results["settings"]["baseline"]
    ratios = [
        ((scenario, arm, baseline), figures)
        for scenario, per_arm in results["ratios_vs_baseline"].items()
        for arm, figures in per_arm.items()
    ] + [
        ((scenario, *label.split("/")), figures)  # "arm/reference"
        for scenario, per_pair in results["ratios_between_arms"].items()
        for label, figures in per_pair.items()
    ]
    for key, figures in ratios:
        figures["stopped"] = stopping.ratio_stopped(key, len(figures["per_repeat"]))
        figures["repeats_needed"] = stopping.needed.get(key)
    if stopping.pilot_over_budget_s is not None:
        flags.append(
            f"the pilot of {settings.repeats} repeats was expected to take about "
            f"{stopping.pilot_over_budget_s / 60:.0f} min, past the budget of "
            f"{settings.budget_s / 60:g} min: it ran whole, with no room for more repeats; "
            "give a larger --budget, fewer scenarios or shorter windows"
        )
    if stopping.stopped == "budget":
        short = sorted(
            f"{settings.plan.scenario(key[0]).label} {key[1]}/{key[2]} ({count})"
            for key, count in stopping.needed.items()
            if count > stopping.repeats
        )
        flags.append(
            f"the budget ({settings.budget_s / 60:g} min) ended the run at {stopping.repeats} "
            f"repeats, before the target ±{settings.precision:.0%} for {', '.join(short)} "
            "(repeats needed in brackets): their intervals are wider than asked; give a larger "
            "--budget, or fewer scenarios"
        )
    return flags


FOREIGN_CPU = "other programs used the app's CPU"  # analysis/flags.py's window flag


def terms_flags(
    settings: CompareSettings, pinning: PinningPlan, lives: Sequence[ArmLife] = ()
) -> list[str]:
    """Arms on different terms: those the harness started run pinned to the app CPUs, the
    others (reached by URL, or launched by a command such as docker run) wherever they run,
    unless their processes were read and may run on the app CPUs alone (a container started
    with --cpuset-cpus, named in `container`)."""
    confined = {
        arm: bool(arm_lives) and all(life.cpus == pinning.app_cpus for life in arm_lives)
        for arm in settings.plan.arms
        if (arm_lives := [life for life in lives if life.arm == arm])
    }
    pinned = {
        arm: settings.reads_process(arm) or confined.get(arm, False) for arm in settings.plan.arms
    }
    if not pinning.enabled or len(set(pinned.values())) < 2:
        return []
    on_app_cpus = ", ".join(name for name, yes in pinned.items() if yes)
    elsewhere = ", ".join(name for name, yes in pinned.items() if not yes)
    return [
        f"the arms ran on different terms: {on_app_cpus} on the app CPUs "
        f"{list(pinning.app_cpus)}, {elsewhere} wherever its own process runs (not pinned here); "
        "give every arm the same CPUs (docker run --cpuset-cpus) or pass --no-pin (the unpinned "
        "arms' CPU on the app CPUs is why other programs' use of them is not flagged)"
    ]
