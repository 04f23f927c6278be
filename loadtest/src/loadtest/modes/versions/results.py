"""What a versions run says (runner.py): per step of the series, the minor over the minor
before it and each over v1, on every scenario (r/s and app CPU per request, paired by round
within the step); per arm its versions, environment, start-up and idle memory."""

from dataclasses import asdict
from typing import Any

from loadtest.analysis.flags import ratio_flags
from loadtest.analysis.ratio import PairedRatio, paired_ratio
from loadtest.analysis.stats import summarize
from loadtest.lab.arms import BASELINE, arm_named
from loadtest.lab.pinning import PinningPlan
from loadtest.lab.startup import StartupSamples
from loadtest.load.scenarios import SCENARIOS
from loadtest.modes.versions.settings import VersionsSettings, baseline_of
from loadtest.pipeline.records import ArmLife, ScenarioRun
from loadtest.pipeline.results import (
    memory_results,
    ratio_results,
    scenario_results,
    startup_results,
)

# Each step's ratios: (key, arm, reference) by the step's (before, minor) and their baselines
# (v1, or v1 on each one's Python); the baselines' own step where they differ (--python).
STEP_RATIOS = (
    ("step", "to", "from"),
    ("to_over_v1", "to", "to_v1"),
    ("from_over_v1", "from", "from_v1"),
    ("v1_step", "to_v1", "from_v1"),
)


def step_results(
    settings: VersionsSettings,
    number: int,
    step: tuple[str, str],
    lives: list[ArmLife],
    runs: list[ScenarioRun],
    generated: dict[str, Any] | None,
) -> dict[str, Any]:
    """One step: its ratios and each arm's figures, per scenario; and the generated app's
    start-up and idle memory, the minor over the minor before (paired by round)."""
    ends = {
        "from": step[0],
        "to": step[1],
        "from_v1": baseline_of(step[0]),
        "to_v1": baseline_of(step[1]),
    }
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
                if ends[arm] != ends[reference]
            },
            "arms": {
                arm: scenario_results(
                    name,
                    arm,
                    [window for window in own if window.arm == arm],
                    [life for life in step_lives if life.arm == arm],
                    runs_of,
                )
                for arm in settings.for_step(step).apps
            },
        }
    return {
        "step": number,
        "from": step[0],
        "to": step[1],
        "arm_order": [life.arm for life in step_lives],
        "scenarios": scenarios,
        "generated": generated_ratios(generated, step[1], step[0]),
        # --python: v1's own step, between the two Pythons.
        **(
            {"v1_generated": generated_ratios(generated, ends["to_v1"], ends["from_v1"])}
            if ends["to_v1"] != ends["from_v1"]
            else {}
        ),
    }


def arm_results(
    arm: str,
    lives: list[ArmLife],
    startup: dict[str, StartupSamples],
    environments: dict[str, Any],
    generated: dict[str, Any] | None,
) -> dict[str, Any]:
    """An arm's versions (as its /health said them), its environment, start-up, memory, and
    the generated app's start-up and idle memory."""
    own = [life for life in lives if life.arm == arm]
    versions = next((life.versions for life in own if life.versions), {})
    return {
        "label": arm_named(arm).label,
        "pins": list(arm_named(arm).pins),
        "python": arm_named(arm).python,
        "baseline": baseline_of(arm),
        "versions": versions,
        "environment": environments.get(arm),
        "startup": startup_results(startup.get(arm)),
        "memory": memory_results(own),
        "generated": generated_results(generated, arm),
    }


# The generated app's figures a versions run reports: per arm over its rounds, and per step.
GENERATED_METRICS = ("to_health_s", "import_s", "rss_idle_mib", "uss_idle_mib")


def generated_results(generated: dict[str, Any] | None, arm: str) -> dict[str, Any] | None:
    """The arm's generated-app processes: each figure's median, min and max over its rounds,
    or why it gave none."""
    if generated is None:
        return None
    own = [entry for entry in generated["samples"] if entry["arm"] == arm]
    finished = [entry for entry in own if "unfinished" not in entry]
    return {
        "models": generated["models"],
        "shape": generated["shape"],
        "processes": len(finished),
        # Why a process of it gave no figures (it was not started again), or None.
        "unfinished": generated["unfinished"].get(arm),
        # Its first process's check of every route's answer and of OpenAPI: "passed", or why
        # not.
        "checked": generated["checks"].get(arm),
        **{
            metric: summarize([entry[metric] for entry in finished]) for metric in GENERATED_METRICS
        },
    }


def generated_ratios(
    generated: dict[str, Any] | None, arm: str, reference: str
) -> dict[str, Any] | None:
    """The arm's generated-app figures over the reference's, paired by round."""
    if generated is None:
        return None

    def by_round(name: str, metric: str) -> dict[int, float]:
        return {
            entry["round"]: entry[metric]
            for entry in generated["samples"]
            if entry["arm"] == name and entry.get(metric)
        }

    return {
        metric: paired_ratio(by_round(arm, metric), by_round(reference, metric)).as_dict()
        for metric in ("to_health_s", "rss_idle_mib")
    }


def versions_flags(
    steps: list[dict[str, Any]], arms: dict[str, dict[str, Any]], remedy: str
) -> list[str]:
    """Each arm's scenario flags (verification, failures, windows), said with its step; each
    arm whose generated app failed its check; the step ratios (v1's own, with --python) whose
    interval is missing or too wide."""
    flags = []
    labelled = []
    for step in steps:
        where = f"step {step['step']} ({step['from']} → {step['to']})"
        for name, figures in step["scenarios"].items():
            label = SCENARIOS[name].label
            for arm, own in figures["arms"].items():
                flags += [f"{where} · {arm} · {label}: {flag}" for flag in own["flags"]]
            labelled.append((f"{label} {step['to']}/{step['from']}", figures["step"]))
            if "v1_step" in figures:  # --python: v1's own step between the two Pythons
                to_v1, from_v1 = baseline_of(step["to"]), baseline_of(step["from"])
                labelled.append((f"{label} {to_v1}/{from_v1}", figures["v1_step"]))
    for arm, figures in arms.items():
        generated = figures["generated"]
        if generated and generated["checked"] not in (None, "passed"):
            flags.append(f"{arm} · the generated app: {generated['checked']}")
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
    generated: dict[str, Any] | None,
    database: dict[str, Any],
    pinning: PinningPlan,
    environments: dict[str, Any],
) -> dict[str, Any]:
    """What results.json holds after its header (modes/session.py)."""
    steps = [
        step_results(settings, number, step, lives, runs, generated)
        for number, step in enumerate(settings.steps, 1)
    ]
    arms = {arm: arm_results(arm, lives, startup, environments, generated) for arm in settings.apps}
    return {
        "pinning": pinning.as_dict(),
        "settings": describe_settings(settings, database),
        "chains": [list(chain) for chain in settings.chains],
        "arms": {
            arm: arm_results(arm, lives, startup, environments, generated) for arm in settings.apps
        },
        "steps": steps,
        "calibration": calibration,
        "flags": versions_flags(steps, arms, "add pairs (--pairs)"),
        "windows": [window.as_dict() for run in runs for window in run.windows],
    }


def describe_settings(settings: VersionsSettings, database: dict[str, Any]) -> dict[str, Any]:
    plain = {
        key: (list(value) if isinstance(value, tuple) else value)
        for key, value in asdict(settings).items()
        if key not in (*settings.NOT_IN_RESULTS, "apps", "ports", "docker", "cross_check", "fit")
        and key not in ("set_by_hand", "repeats", "chains")
    }
    # The one baseline, where every arm's is v1; with --python, each arm's own (arms.<arm>).
    one = BASELINE if all(baseline_of(arm) == BASELINE for arm in settings.apps) else None
    return plain | {"baseline": one, "database": database, "steps": len(settings.steps)}
