"""Is a benchmark's results.json complete? What docker/smoke.sh asks of `./test.sh --docker`:

    python -m loadtest.modes.benchmark.completeness results/<run>/results.json [--docker]

Complete means: every arm ran every scenario and passed its verification, no request failed,
every write was stored, every arm's ratio to the baseline (and between arms) has its interval,
and every arm's memory was read. It prints one line per gap and exits 1 if there is any.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

MEMORY_READINGS = ("idle_rss_mib", "peak_rss_mib", "after_rss_mib")
INTERVAL = ("estimate", "ci95_low", "ci95_high")


def has_interval(ratio: dict[str, Any] | None) -> bool:
    if not ratio or any(not isinstance(ratio.get(key), (int, float)) for key in INTERVAL):
        return False
    return 0 < ratio["ci95_low"] <= ratio["estimate"] <= ratio["ci95_high"]


def gaps(results: dict[str, Any], *, docker: bool = False) -> list[str]:
    """What a complete run has and this one lacks, one sentence each."""
    if results.get("kind") != "benchmark":
        return [f"not a benchmark's results.json (kind: {results.get('kind')!r})"]
    settings = results["settings"]
    found: list[str] = []
    if docker and not (settings.get("docker") and settings["database"]["kind"] == "docker"):
        found.append("the run was not against the compose stack (settings.docker is not set)")
    interpreter = results.get("host", {}).get("interpreter") or {}
    if docker and not str(interpreter.get("where", "")).startswith("container"):
        found.append("the containers' interpreter build was not recorded (host.interpreter)")
    arms, baseline = settings["apps"], settings["baseline"]
    if baseline is None:
        found.append("no baseline among the arms, so no ratios")
    for arm in arms:
        own = results["apps"].get(arm)
        if own is None:
            found.append(f"{arm}: no figures at all")
            continue
        for scenario in settings["scenarios"]:
            figures = own["scenarios"].get(scenario)
            if not figures or not figures["windows"]:
                found.append(f"{arm} · {scenario}: no counted windows")
                continue
            # Verification failures, and failed requests (counted or in warm-up and settling):
            # results.py flags both.
            found += [
                f"{arm} · {scenario}: {flag}"
                for flag in figures["flags"]
                if flag.startswith("verification failed") or "requests failed" in flag
            ]
            if figures.get("acknowledged_writes") != figures.get("new_rows"):
                found.append(
                    f"{arm} · {scenario}: {figures['acknowledged_writes']} writes acknowledged, "
                    f"{figures['new_rows']} stored"
                )
            if arm != baseline and baseline is not None:
                ratio = results["ratios_vs_baseline"].get(scenario, {}).get(arm)
                if not has_interval(ratio):
                    found.append(f"{arm} · {scenario}: no ratio to {baseline} with its interval")
            if docker and settings.get("memory_source") == "process tree":
                # Read directly, the containers' CPU is read too, as a local run's.
                if not (figures.get("app_cpu_ms_per_request") or 0) > 0:
                    found.append(f"{arm} · {scenario}: the container's CPU was not read")
        memory = own["memory"]
        missing = [key for key in MEMORY_READINGS if not (memory.get(key) or 0) > 0]
        if missing:
            found.append(f"{arm}: memory not read ({', '.join(missing)})")
    for scenario, pairs in results["ratios_between_arms"].items():
        found += [
            f"{pair} · {scenario}: no ratio with its interval"
            for pair, ratio in pairs.items()
            if not has_interval(ratio)
        ]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="completeness", description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a benchmark's results.json")
    parser.add_argument("--docker", action="store_true", help="it must be a --docker run")
    arguments = parser.parse_args(argv)
    try:
        results = json.loads(arguments.results.read_text())
    except (OSError, ValueError) as error:
        print(f"error: cannot read {arguments.results}: {error}", file=sys.stderr)
        return 1
    try:
        found = gaps(results, docker=arguments.docker)
    except (KeyError, TypeError, AttributeError) as error:
        print(
            f"error: {arguments.results} is not a whole results.json ({type(error).__name__}: "
            f"{error})",
            file=sys.stderr,
        )
        return 1
    for line in found:
        print(f"incomplete: {line}", file=sys.stderr)
    if found:
        return 1
    arms = results["settings"]["apps"]
    ratios = sum(len(pairs) for pairs in results["ratios_vs_baseline"].values())
    print(
        f"complete: {len(arms)} arms verified in every scenario, {ratios} ratios to "
        f"{results['settings']['baseline']} with intervals, memory read for every arm"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
