"""What a sweep says (runner.py): per cell, its bytes and timetable; per arm its r/s, app CPU
per request and per post, p50/p99; each comparison's ratios (r/s, and CPU per request) paired
by the cell's group in each round, median and 95% CI; and where the read curves cross 1.5x
and 3x."""

import math
from typing import Any

from loadtest.analysis.cells import cell_flags, paired_cell
from loadtest.lab.arms import comparisons
from loadtest.load.cell_timetable import CellTiming, timetable_record
from loadtest.load.cells import CellProbe
from loadtest.load.locust_runs import LocustRun
from loadtest.load.paired import PairedSetup
from loadtest.load.plan import Request
from loadtest.load.schedule import Schedule
from loadtest.load.windows import WindowRecord
from loadtest.modes.sweep.cells import Cell
from loadtest.modes.sweep.settings import READ_SHAPES, SHAPES, SweepSettings

CROSSINGS = (1.5, 3.0)


def crossings(cells: list[dict[str, Any]], comparison: str) -> dict[str, dict[str, Any]]:
    """Per read shape and threshold: the response size at which the gain's estimate first
    reaches it, interpolated on log bytes between the two cells around it (None: not reached,
    or reached at the smallest size already); and the same for the interval's bounds, which
    brackets it (the upper bound reaches it first)."""
    found: dict[str, dict[str, Any]] = {}
    for shape in READ_SHAPES:
        points = [
            (cell["response_bytes"], cell["gains"][comparison])
            for cell in cells
            if cell["shape"] == shape and comparison in cell["gains"]
        ]
        if len(points) < 2:
            continue
        found[shape] = {
            f"{threshold:g}x": {
                key: crossing_bytes(points, threshold, key)
                for key in ("estimate", "ci95_low", "ci95_high")
            }
            for threshold in CROSSINGS
        }
    return found


def crossing_bytes(
    points: list[tuple[int, dict[str, Any]]], threshold: float, key: str
) -> int | None:
    for (bytes_a, a), (bytes_b, b) in zip(points, points[1:], strict=False):
        low, high = a.get(key), b.get(key)
        if low is None or high is None:
            continue
        if low < threshold <= high:
            share = (threshold - low) / (high - low)
            log_bytes = math.log(bytes_a) + share * (math.log(bytes_b) - math.log(bytes_a))
            return round(math.exp(log_bytes))
    return None


def build_sweep_results(
    settings: SweepSettings,
    setup: PairedSetup,
    *,
    cells: list[Cell],
    requests: dict[Cell, Request],
    probes: dict[Cell, dict[str, CellProbe]],
    timings: dict[Cell, CellTiming],
    schedule: Schedule,
    records: list[WindowRecord],
    locust: LocustRun,
) -> dict[str, Any]:
    """What results.json holds after its header (modes/session.py)."""
    pairs = comparisons(settings.apps)
    cell_results = [
        {"name": cell.name, "shape": cell.shape, "size": cell.size}
        | paired_cell(
            cell, settings.apps, pairs, requests[cell], probes[cell], timings[cell], records
        )
        | {"counted_s": {app: round(s, 3) for app, s in timings[cell].counted_s.items()}}
        for cell in cells
    ]
    comparison_names = [f"{app}/{reference}" for app, reference in pairs]
    return {
        "pinning": setup.pinning.as_dict(),
        "settings": describe_settings(settings),
        "versions": setup.versions,
        "shapes": {shape: SHAPES[shape] for shape in settings.shapes},
        "comparisons": comparison_names,
        "cells": cell_results,
        "crossings": {name: crossings(cell_results, name) for name in comparison_names},
        "calibration": setup.calibration,
        "locust": locust.summary(),
        "measured_s": round(schedule.end - schedule.start, 1),
        "flags": cell_flags(
            cell_results,
            records,
            locust,
            min(settings.load_processes, len(setup.pinning.load_cpus)) or 1,
            settings.apps,
        ),
        "windows": [record.as_dict() for record in records],
    }


def describe_settings(settings: SweepSettings) -> dict[str, object]:
    """The settings that shape a sweep, for results.json."""
    return {
        "apps": list(settings.apps),
        "shapes": list(settings.shapes),
        "sizes": list(settings.sizes) if settings.sizes else None,
        "comments_per_post": settings.comments,
    } | timetable_record(settings)
