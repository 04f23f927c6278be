"""What a shapes run says (runner.py): per cell, its bytes; per arm its r/s, app CPU per request
and p50/p99; each comparison's ratios (r/s, and CPU per request) paired by the cell's group in
each round, as the sweep pairs them; and within each arm, the discriminated union over the
plain one and the reusable adapter over parse_obj_as, paired by round."""

from typing import Any

from loadtest.analysis.cells import cell_flags, paired_cell
from loadtest.analysis.paired_windows import by_group, served_rps
from loadtest.analysis.ratio import paired_ratio
from loadtest.lab.arms import comparisons
from loadtest.load.cell_timetable import CellTiming, timetable_record
from loadtest.load.cells import CellProbe, cell_slot
from loadtest.load.locust_runs import LocustRun
from loadtest.load.paired import PairedSetup
from loadtest.load.plan import Request
from loadtest.load.schedule import Schedule
from loadtest.load.windows import WindowRecord
from loadtest.modes.shapes.cells import KINDS, ShapeCell
from loadtest.modes.shapes.settings import ShapesSettings

# Within an arm: (the cell's kind, the kind it is compared with, what the ratio says).
WITHIN = (
    ("union-tagged", "union", "discriminated over plain"),
    ("union-tagged-validate", "union-validate", "discriminated over plain"),
    ("adapter", "parse_obj_as", "a reused adapter over parse_obj_as at every call"),
)


def within_arm_ratios(
    records: list[WindowRecord], cells: list[ShapeCell], apps: tuple[str, ...]
) -> list[dict[str, Any]]:
    """Per pair of cells WITHIN lists, per arm: the cell's r/s over the other's, paired by round
    (a round holds one group per cell, so a group's round is its index over the cells)."""
    found = []
    for cell in cells:
        for kind, other_kind, what in WITHIN:
            if cell.kind != kind:
                continue
            other = ShapeCell(other_kind, cell.size, cell.members)
            if other not in cells:
                continue
            ratios = {}
            for arm in apps:
                mine, theirs = (
                    {
                        group // len(cells): value
                        for group, value in by_group(
                            records, cell_slot(which, arm), served_rps
                        ).items()
                    }
                    for which in (cell, other)
                )
                ratios[arm] = paired_ratio(mine, theirs).as_dict()
            found.append({"cell": cell.name, "over": other.name, "what": what, "ratios": ratios})
    return found


def settings_record(settings: ShapesSettings) -> dict[str, Any]:
    """The run's settings as results.json records them."""
    return {
        "apps": list(settings.apps),
        "members": list(settings.members),
        "union_sizes": list(settings.union_sizes),
        "validate_sizes": list(settings.validate_sizes),
        "tree_depths": list(settings.tree_depths),
        "row_sizes": list(settings.row_sizes),
    } | timetable_record(settings)


def build_shapes_results(
    settings: ShapesSettings,
    setup: PairedSetup,
    *,
    cells: list[ShapeCell],
    requests: dict[ShapeCell, Request],
    probes: dict[ShapeCell, dict[str, CellProbe]],
    timings: dict[ShapeCell, CellTiming],
    schedule: Schedule,
    records: list[WindowRecord],
    locust: LocustRun,
) -> dict[str, Any]:
    """What results.json holds after its header (modes/session.py)."""
    pairs = comparisons(settings.apps)
    cell_results = [
        {
            "name": cell.name,
            "kind": cell.kind,
            "shape": cell.shape,
            "size": cell.size,
            "members": cell.members or None,
            "read": cell.is_read,
        }
        | paired_cell(
            cell, settings.apps, pairs, requests[cell], probes[cell], timings[cell], records
        )
        for cell in cells
    ]
    return {
        "pinning": setup.pinning.as_dict(),
        "settings": settings_record(settings),
        "versions": setup.versions,
        "kinds": KINDS,
        "comparisons": [f"{arm}/{reference}" for arm, reference in pairs],
        "cells": cell_results,
        "within_arms": within_arm_ratios(records, cells, settings.apps),
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
