"""The factor experiment's answer from one compare run: each variant's v2/v1 ratio, and how far
that ratio moves against the first variant's, both paired by round, with exact 95% intervals.

An arm is named `<app>-<variant>` (v1-proxy, v2-proxy, ...). Within each round of the run every
arm had one window, so per round the variant's ratio (v2 r/s over v1 r/s) and its effect (that
ratio over the reference variant's ratio in the same round) are each one number; the figures are
their medians with the distribution-free interval the lab uses everywhere (analysis/stats.py).

    loadtest/.venv/bin/python docker/factors/effects.py results/<run>-compare [...]
"""

import json
import sys
from pathlib import Path
from typing import Any

from loadtest.analysis.stats import median_with_ci

Window = dict[str, Any]  # one record of results.json's `windows`


def variants_of(arms: list[str]) -> list[str]:
    """The variants with both a v1 and a v2 arm, in the run's order."""
    found = [arm.split("-", 1)[1] for arm in arms if arm.startswith("v1-")]
    return [variant for variant in found if f"v2-{variant}" in arms]


def by_round(windows: list[Window], scenario: str, arm: str) -> dict[tuple[int, int], float]:
    """The arm's r/s by (repeat, round): the key the lab pairs windows by."""
    return {
        (window["repeat"], window["round"]): window["rps"]
        for window in windows
        if window["arm"] == arm and window["scenario"] == scenario
    }


def ratios_by_round(
    windows: list[Window], scenario: str, variant: str
) -> dict[tuple[int, int], float]:
    v1 = by_round(windows, scenario, f"v1-{variant}")
    v2 = by_round(windows, scenario, f"v2-{variant}")
    return {key: v2[key] / v1[key] for key in v1.keys() & v2.keys() if v1[key] > 0}


def figure(values: list[float]) -> str:
    median, low, high = median_with_ci(values)
    if median is None:
        return "–"
    if low is None or high is None:
        return f"{median:.2f}x"
    return f"{median:.2f}x [{low:.2f}–{high:.2f}]"


def effects(results: dict[str, Any]) -> list[list[str]]:
    """Rows: scenario, variant, v2/v1, effect on v2/v1 against the first variant."""
    windows = results["windows"]
    arms = list(results["apps"])
    labels = results["settings"].get("scenario_labels", {})
    variants = variants_of(arms)
    rows = []
    for scenario in results["settings"]["scenarios"]:
        reference = ratios_by_round(windows, scenario, variants[0])
        for variant in variants:
            own = ratios_by_round(windows, scenario, variant)
            moved = [own[key] / reference[key] for key in own.keys() & reference.keys()]
            rows.append(
                [
                    labels.get(scenario, scenario),
                    variant,
                    figure(list(own.values())),
                    "reference" if variant == variants[0] else figure(moved),
                ]
            )
    return rows


def main(folders: list[str]) -> int:
    if not folders:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    for folder in folders:
        path = Path(folder) / "results.json"
        try:
            results = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            print(f"error: cannot read {path}: {error}", file=sys.stderr)
            return 1
        if results.get("kind") != "compare" or not variants_of(list(results["apps"])):
            print(
                f"error: {path} is not a factor run (compare, arms v1-X and v2-X)", file=sys.stderr
            )
            return 1
        print(f"{folder} ({results['started_at']}, {results['host']['cpu_model']})")
        print("| scenario | variant | v2/v1 [95% CI] | v2/v1 over the first variant's [95% CI] |")
        print("|---|---|---|---|")
        for row in effects(results):
            print("| " + " | ".join(row) + " |")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
