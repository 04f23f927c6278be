"""What a versions run says (runner.py): per step of the series, the minor over the minor
before it and each over v1, on every scenario (r/s and app CPU per request, paired by round
within the step); per arm its versions, environment, start-up and idle memory."""

from dataclasses import asdict
from typing import Any

from loadtest.analysis.flags import ratio_flags
from loadtest.analysis.ratio import PairedRatio
from loadtest.lab.arms import BASELINE, arm_named
from loadtest.lab.pinning import PinningPlan
from loadtest.lab.startup import StartupSamples
from loadtest.load.scenarios import SCENARIOS
from loadtest.modes.versions.settings import VersionsSettings
from loadtest.pipeline.records import ArmLife, ScenarioRun
from loadtest.pipeline.results import (
    memory_results,
    ratio_results,
    scenario_results,
    startup_results,
)

# Each step's ratios: (key, arm, reference) by the step's (before, minor).
STEP_RATIOS = (
    ("step", "to", "from"),
    ("to_over_v1", "to", BASELINE),
    ("from_over_v1", "from", BASELINE),
)


def step_results(
    settings: VersionsSettings,
    number: int,
    step: tuple[str, str],
    lives: list[ArmLife],
    runs: list[ScenarioRun],
) -> dict[str, Any]:
    """One step: its ratios and each arm's figures, per scenario."""
    ends = {"from": step[0], "to": step[1], BASELINE: BASELINE}
    step_lives = [life for life in lives if life.repeat == number]
    step_runs = [run for run in runs if run.repeat == number]
    windows = [window for run in step_runs for window in run.windows]
    scenarios: dict[str, Any] = {}
    for name in settings.scenarios:
        runs_of = [run for run in step_runs if run.scenario == name]
        own = [window for window in windows if window.scenario == name]
        scenarios[name] = {
            **{
                key: ratio_results(own, name, ends[arm], ends[reference])
                for key, arm, reference in STEP_RATIOS
            },
            "arms": {
                arm: scenario_results(
                    name,
                    arm,
                    [window for window in own if window.arm == arm],
                    [life for life in step_lives if life.arm == arm],
                    runs_of,
                )
                for arm in (BASELINE, *step)
            },
        }
    return {
        "step": number,
        "from": step[0],
        "to": step[1],
        "arm_order": [life.arm for life in step_lives],
        "scenarios": scenarios,
    }


def arm_results(
    arm: str,
    lives: list[ArmLife],
    startup: dict[str, StartupSamples],
    environments: dict[str, Any],
) -> dict[str, Any]:
    """An arm's versions (as its /health said them), its environment, start-up, memory."""
    own = [life for life in lives if life.arm == arm]
    versions = next((life.versions for life in own if life.versions), {})
    return {
        "label": arm_named(arm).label,
        "pins": list(arm_named(arm).pins),
        "versions": versions,
        "environment": environments.get(arm),
        "startup": startup_results(startup.get(arm)),
        "memory": memory_results(own),
    }


def versions_flags(steps: list[dict[str, Any]], remedy: str) -> list[str]:
    """Each arm's scenario flags (verification, failures, windows), said with its step, and
    the step ratios whose interval is missing or too wide."""
    flags = []
    labelled = []
    for step in steps:
        where = f"step {step['step']} ({step['from']} → {step['to']})"
        for name, figures in step["scenarios"].items():
            label = SCENARIOS[name].label
            for arm, own in figures["arms"].items():
                flags += [f"{where} · {arm} · {label}: {flag}" for flag in own["flags"]]
            labelled.append((f"{label} {step['to']}/{step['from']}", figures["step"]))
    return flags + ratio_flags(
        [(label, PairedRatio.from_dict(figures)) for label, figures in labelled], remedy
    )


def build_versions_results(
    settings: VersionsSettings,
    *,
    lives: list[ArmLife],
    runs: list[ScenarioRun],
    calibration: dict[str, Any] | None,
    startup: dict[str, StartupSamples],
    database: dict[str, Any],
    pinning: PinningPlan,
    environments: dict[str, Any],
) -> dict[str, Any]:
    """What results.json holds after its header (modes/session.py)."""
    steps = [
        step_results(settings, number, step, lives, runs)
        for number, step in enumerate(settings.steps, 1)
    ]
    return {
        "pinning": pinning.as_dict(),
        "settings": describe_settings(settings, database),
        "chains": [list(chain) for chain in settings.chains],
        "arms": {arm: arm_results(arm, lives, startup, environments) for arm in settings.apps},
        "steps": steps,
        "calibration": calibration,
        "flags": versions_flags(steps, "add pairs (--pairs)"),
        "windows": [window.as_dict() for run in runs for window in run.windows],
    }


def describe_settings(settings: VersionsSettings, database: dict[str, Any]) -> dict[str, Any]:
    plain = {
        key: (list(value) if isinstance(value, tuple) else value)
        for key, value in asdict(settings).items()
        if key not in (*settings.NOT_IN_RESULTS, "apps", "ports", "docker", "cross_check", "fit")
        and key not in ("set_by_hand", "repeats", "chains")
    }
    return plain | {"baseline": BASELINE, "database": database, "steps": len(settings.steps)}
