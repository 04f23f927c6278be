"""The figures of cells in paired windows, as every mode of cells writes them (the sweep's, the
shapes mode's): per arm its r/s, app CPU per request and per post, p50/p99; each comparison's
ratios (r/s, and CPU per request) paired by the cell's group in each round; the gain read from
them; and the flags of the figures."""

from typing import Any

from loadtest.analysis.flags import locust_flags, ratio_flags, window_flags
from loadtest.analysis.limits import SATURATION_LIMIT
from loadtest.analysis.paired_windows import by_group, median_of, served_rps
from loadtest.analysis.ratio import PairedRatio, paired_ratio
from loadtest.analysis.stats import round_or_none
from loadtest.load.cell_timetable import COUNTED_REQUESTS, CellTiming
from loadtest.load.cells import CellProbe, NamedCell, cell_slot
from loadtest.load.histograms import merge_histograms, percentile_ms
from loadtest.load.locust_runs import LocustRun
from loadtest.load.plan import Request
from loadtest.load.windows import WindowRecord

# Fewer counted requests than this in an arm's median window: its r/s is coarse (±10% and
# more from one request).
FEW_REQUESTS = COUNTED_REQUESTS // 2


def arm_figures(records: list[WindowRecord], cell: NamedCell, probe: CellProbe) -> dict[str, Any]:
    rps = median_of(records, lambda record: record.rps)
    cpu_ms = median_of(records, lambda record: record.app_cpu_ms_per_request)
    busy = median_of(records, lambda record: record.app_cpu_busy)
    histogram = merge_histograms(record.histogram for record in records)
    cpu_us = cpu_ms * 1000 if cpu_ms else None
    return {
        "rps": round_or_none(rps, 2),
        "app_cpu_us_per_request": round_or_none(cpu_us, 1),
        "app_cpu_us_per_post": round_or_none(cpu_us / cell.size if cpu_us else None, 2),
        "app_cpu_busy": round_or_none(busy, 3),
        # The app kept under SATURATION_LIMIT of its CPU busy: its r/s is the load generator's.
        "load_bound": busy is not None and busy < SATURATION_LIMIT,
        "p50_ms": percentile_ms(histogram, 0.5),
        "p99_ms": percentile_ms(histogram, 0.99),
        "requests_per_window": median_of(records, lambda record: float(record.requests)),
        "windows": len(records),
        "failures": sum(record.failures for record in records),
        "response_bytes": probe.response_bytes,
        "alone_ms": round(probe.seconds * 1000, 2),
    }


def cpu_per_request(record: WindowRecord) -> float | None:
    return record.app_cpu_ms_per_request or None


def cell_ratios(
    records: list[WindowRecord], cell: NamedCell, app: str, reference: str
) -> dict[str, Any]:
    """The app over the reference in the cell: by r/s (above 1: faster) and by app CPU per
    request (the reference's over the app's: above 1, it costs less), paired by round."""
    own, other = cell_slot(cell, app), cell_slot(cell, reference)
    return {
        # An empty window is no pair (flagged by window_flags), on either side.
        "rps": paired_ratio(
            by_group(records, own, served_rps),
            by_group(records, other, served_rps),
        ).as_dict(),
        "cpu": paired_ratio(
            by_group(records, other, cpu_per_request), by_group(records, own, cpu_per_request)
        ).as_dict(),
    }


def gain(ratios: dict[str, Any], load_bound: bool) -> dict[str, Any]:
    """The cell's gain: by r/s, unless either arm was not saturated (held back by the load
    generator or by PostgreSQL); then by app CPU per request (what the app would give at
    saturation)."""
    return {"by": "cpu" if load_bound else "rps", **ratios["cpu" if load_bound else "rps"]}


def cell_flags(
    cells: list[dict[str, Any]],
    records: list[WindowRecord],
    locust: LocustRun,
    load_cores: int,
    apps: tuple[str, ...],
) -> list[str]:
    flags = []
    labelled: list[tuple[str, PairedRatio]] = []
    for cell in cells:
        for app, figures in cell["arms"].items():
            if figures["failures"]:
                flags.append(
                    f"{cell['name']} {app}: {figures['failures']} failed requests (not counted "
                    "as throughput)"
                )
            if (figures["requests_per_window"] or 0) < FEW_REQUESTS:
                flags.append(
                    f"{cell['name']} {app}: {figures['requests_per_window']:g} requests a window "
                    "(median): its r/s is coarse"
                )
        for name, ratios in cell["ratios"].items():
            labelled.append((f"{cell['name']} {name} (r/s)", PairedRatio.from_dict(ratios["rps"])))
            labelled.append((f"{cell['name']} {name} (CPU)", PairedRatio.from_dict(ratios["cpu"])))
        load_bound = [app for app, figures in cell["arms"].items() if figures["load_bound"]]
        if load_bound:
            flags.append(
                f"{cell['name']}: {', '.join(load_bound)} kept under {SATURATION_LIMIT:.0%} of "
                "the app's CPU busy (the load generator, or requests waiting on PostgreSQL, "
                "held it back): the cell's gain is read from app CPU per request"
            )
    for app in apps:
        windows = [record for record in records if record.arm == app]
        flags += [f"{app}: {flag}" for flag in window_flags(windows)]
    flags += locust_flags(locust, load_cores, "the sweep")
    return flags + ratio_flags(labelled, "raise --pairs")


def paired_cell(
    cell: NamedCell,
    apps: tuple[str, ...],
    pairs: list[tuple[str, str]],
    request: Request,
    probes: dict[str, CellProbe],
    timing: CellTiming,
    records: list[WindowRecord],
) -> dict[str, Any]:
    """One cell's figures in results.json, as every mode of cells in paired windows writes them
    (the sweep's, the shapes mode's): what it sends and its bytes (the first arm's), each arm's
    figures, each comparison's ratios and the gain read from them."""
    arms = {
        app: arm_figures(
            [record for record in records if record.slot == cell_slot(cell, app)],
            cell,
            probes[app],
        )
        for app in apps
    }
    ratios = {
        f"{app}/{reference}": cell_ratios(records, cell, app, reference) for app, reference in pairs
    }
    return {
        "method": request.method,
        "path": request.path,
        "request_bytes": probes[apps[0]].request_bytes,
        "response_bytes": probes[apps[0]].response_bytes,
        "users": timing.users,
        "arms": arms,
        "ratios": ratios,
        "gains": {
            name: gain(
                figures,
                arms[name.split("/")[0]]["load_bound"] or arms[name.split("/")[1]]["load_bound"],
            )
            for name, figures in ratios.items()
        },
    }
