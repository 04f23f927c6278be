"""What a micro run says: per benchmark its time per call and its ratio to the group's
plain-Python baseline, paired within rounds; and across arms, paired round by round."""

import statistics
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from loadtest.analysis.ratio import paired_ratio, ratios_by_key
from loadtest.lab.arms import BASELINE
from loadtest.lab.errors import LabError
from loadtest.modes.micro.settings import MicroSettings

PYDANTIC_GROUP = "pydantic"
SHAPES_GROUP = "shapes"
PER_ARM_GROUPS = (PYDANTIC_GROUP, SHAPES_GROUP)  # through each arm's Pydantic: in every arm
SHARED_GROUPS = ("encoders", "container")  # no Pydantic in them: timed in one environment
TITLES = {
    "pydantic": "Pydantic paths, the ladder's 100 posts",
    "shapes": "Reported shapes: a union field dumped to JSON, parse_obj_as at every call",
    "encoders": "JSON encoders, the same 100 post dicts",
    "container": "A container of 2,000 records (as in the App Engine pickle-vs-marshal study)",
}


def samples_by_round(benchmark: dict[str, Any], process: int) -> dict[tuple[int, int], float]:
    return {(process, s["round"]): s["seconds_per_call"] for s in benchmark["samples"]}


def collect_benchmarks(runs: Iterable[dict[str, Any]], arm: str, group: str) -> dict[str, dict]:
    """Per benchmark of the arm's group: its description and seconds per call by (process,
    round), the key that pairs it with its baseline."""
    collected: dict[str, dict[str, Any]] = {}
    for run in runs:
        if run["arm"] != arm:
            continue
        for benchmark in run["benchmarks"]:
            if benchmark["group"] != group:
                continue
            entry = collected.setdefault(
                benchmark["name"],
                {
                    key: value
                    for key, value in benchmark.items()
                    if key not in ("samples", "loops_per_measurement")
                }
                | {"seconds": {}, "loops": []},
            )
            entry["seconds"].update(samples_by_round(benchmark, run["process"]))
            entry["loops"].append(benchmark["loops_per_measurement"])
    return collected


def benchmark_figures(entry: dict[str, Any], baseline: dict[str, Any]) -> dict[str, Any]:
    microseconds = [value * 1e6 for _, value in sorted(entry["seconds"].items())]
    figures: dict[str, Any] = {
        key: value for key, value in entry.items() if key not in ("seconds", "loops")
    }
    figures |= {
        "us_per_call": statistics.median(microseconds),
        "stdev_us": statistics.stdev(microseconds) if len(microseconds) > 1 else None,
        "min_us": min(microseconds),
        "max_us": max(microseconds),
        "samples": len(microseconds),
        "loops_per_measurement": [min(entry["loops"]), max(entry["loops"])],
        "is_baseline": entry["name"] == entry["baseline"],
    }
    # Per round, this benchmark's time over its baseline's in the same round.
    figures["ratio_to_baseline"] = paired_ratio(entry["seconds"], baseline["seconds"]).as_dict()
    return figures


def arm_figures(runs: list[dict[str, Any]], arm: str, group: str) -> dict[str, dict]:
    collected = collect_benchmarks(runs, arm, group)
    missing = {entry["baseline"] for entry in collected.values()} - set(collected)
    if missing:
        raise LabError(f"{group} in {arm}: no baseline {', '.join(sorted(missing))}")
    return {
        name: benchmark_figures(entry, collected[entry["baseline"]])
        for name, entry in collected.items()
    }


def across_arms(
    runs: list[dict[str, Any]], group: str, arms: list[str], reference: str
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per arm and benchmark, the reference arm's time over this arm's (above 1: this arm is
    faster). The arms ran in different processes, so their times are never divided directly:
    each round's time is first taken over the baseline of the same round and process (the same
    plain Python in every environment, which takes the machine's speed out), then round r of
    process p of one arm is paired with round r of process p of the other, which ran seconds
    apart. Median and 95% CI of those pairs."""
    relative: dict[str, dict[str, dict[tuple, float]]] = {}
    for arm in arms:
        collected = collect_benchmarks(runs, arm, group)
        relative[arm] = {
            name: ratios_by_key(entry["seconds"], baseline)
            for name, entry in collected.items()
            if (baseline := collected.get(entry["baseline"], {}).get("seconds"))
        }
    comparisons: dict[str, dict[str, dict[str, Any]]] = {}
    for arm in arms:
        if arm == reference:
            continue
        comparisons[arm] = {}
        for name, ours in relative[arm].items():
            theirs = relative[reference].get(name, {})
            comparisons[arm][name] = paired_ratio(theirs, ours).as_dict()
    return comparisons


def group_arms(runs: list[dict[str, Any]], group: str) -> list[str]:
    arms = []
    for run in runs:
        if group in run["settings"]["groups"] and run["arm"] not in arms:
            arms.append(run["arm"])
    return arms


def summarise_group(runs: list[dict[str, Any]], group: str) -> dict[str, Any]:
    arms = group_arms(runs, group)
    summary: dict[str, Any] = {"title": TITLES.get(group, group), "arms": {}}
    for arm in arms:
        first = next(
            run for run in runs if run["arm"] == arm and group in run["settings"]["groups"]
        )
        benchmarks = arm_figures(runs, arm, group)
        summary["arms"][arm] = {
            "environment": first["environment"],
            "package": first["app"],
            "versions": first["versions"],
            "benchmarks": benchmarks,
        }
    baselines = {
        figures["baseline"]
        for arm in summary["arms"].values()
        for figures in arm["benchmarks"].values()
    }
    summary["baselines"] = sorted(baselines)
    if len(arms) > 1:
        reference = BASELINE if BASELINE in arms else arms[0]
        summary["across_arms"] = {
            "reference": reference,
            "speedup_over_reference": across_arms(runs, group, arms, reference),
        }
    if group == "container":
        container = next(run["container"] for run in runs if "container" in run)
        summary["records"] = container["records"]
        summary["formats"] = container["formats"]
    return summary


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    groups = []
    for run in runs:
        groups += [group for group in run["settings"]["groups"] if group not in groups]
    return {"groups": {group: summarise_group(runs, group) for group in groups}}


def build_micro_results(
    settings: MicroSettings,
    runs: list[dict[str, Any]],
    shared_arm: str,
    cpus: tuple[int, ...] | None,
    pinning_note: str,
) -> dict[str, Any]:
    """What results.json holds after its header (modes/session.py): the settings, the summary
    and every process's raw figures."""
    plan = settings.plan
    return {
        "settings": {
            "apps": list(settings.apps),
            "quick": settings.quick,
            **asdict(plan),
            "pairs_per_benchmark": plan.pairs,
            "shared_groups_arm": shared_arm,
            "pinning": {"cpus": list(cpus) if cpus else None, "note": pinning_note},
            "gc_enabled_during_timing": True,
            "timer": "timeit.Timer with setup 'gc.enable()', loops calibrated per process",
        },
        "micro": summarise(runs) | {"raw": runs},
    }
