"""What a ladder run says (runner.py): per app and rung its r/s and app CPU per request,
its speed-up over response_model (paired with the adjacent response_model window of the same
app, median and 95% CI), its share of the floor, and per rung each app over the baseline app."""

from typing import Any

from commons.ladder import BASE_RUNG, RUNGS
from loadtest.analysis.flags import locust_flags, ratio_flags, window_flags
from loadtest.analysis.limits import SATURATION_LIMIT
from loadtest.analysis.paired_windows import by_group, median_of, served_rps, window_ratio
from loadtest.analysis.ratio import PairedRatio, paired_ratio, ratios_by_key
from loadtest.analysis.stats import round_or_none
from loadtest.lab.arms import BASELINE
from loadtest.load.locust_runs import LocustRun
from loadtest.load.paired import PairedSetup
from loadtest.load.slots import Slot
from loadtest.load.windows import WindowRecord
from loadtest.modes.ladder.settings import LadderSettings

FLOOR_RUNG = "floor"
LADDER_SCENARIO = "ladder"
# Marks the r/s figures of a rung on which the app was not saturated (the load generator's).
LOAD_BOUND_MARK = "†"


def rung_slot(app: str, rung: str) -> str:
    """The schedule slot of an app's rung: the app, the rung its variant ("v2/plain_orjson")."""
    return Slot(app, rung).name


def app_cpu_ms(record: WindowRecord) -> float | None:
    return record.app_cpu_ms_per_request or None


def speedups_by_round(
    records: list[WindowRecord], app: str, rung: str, groups_per_round: int, kind: str
) -> dict[int, float]:
    """The rung's speed-up over its adjacent response_model window, per round (a rung has one
    group a round); 1 for response_model itself. By r/s: the rung's r/s over response_model's;
    by CPU: how many times less app CPU a request took on the rung."""
    base = rung_slot(app, BASE_RUNG)
    if rung == BASE_RUNG:
        rounds = {record.round // groups_per_round for record in records if record.slot == base}
        return dict.fromkeys(rounds, 1.0)
    own = rung_slot(app, rung)
    if kind == "rps":
        speedups = ratios_by_key(
            by_group(records, own, served_rps),
            by_group(records, base, served_rps),
        )
    else:
        speedups = ratios_by_key(
            by_group(records, base, app_cpu_ms), by_group(records, own, app_cpu_ms)
        )
    return {group // groups_per_round: value for group, value in speedups.items()}


def rung_figures(
    records: list[WindowRecord], app: str, rung: str, groups_per_round: int
) -> dict[str, Any]:
    own = [record for record in records if record.slot == rung_slot(app, rung)]
    rps = median_of(own, lambda record: record.rps)
    cpu_ms = median_of(own, lambda record: record.app_cpu_ms_per_request)
    busy = median_of(own, lambda record: record.app_cpu_busy)
    figures: dict[str, Any] = {
        "rps": round_or_none(rps, 1),
        "app_cpu_us_per_request": round_or_none(cpu_ms * 1000 if cpu_ms else None, 1),
        "app_cpu_busy": round_or_none(busy, 3),
        # The app kept under SATURATION_LIMIT of its CPU busy: its r/s is the load generator's.
        "load_bound": busy is not None and busy < SATURATION_LIMIT,
        "windows": len(own),
        "failures": sum(record.failures for record in own),
    }
    if rung == BASE_RUNG:
        return figures  # the reference of every speed-up
    speedup, by_cpu = (
        PairedRatio.from_pairs(
            list(speedups_by_round(records, app, rung, groups_per_round, kind).values())
        ).as_dict()
        for kind in ("rps", "cpu")
    )
    figures |= {"speedup": speedup, "cpu_speedup": by_cpu}
    return figures


def add_floor_shares(
    records: list[WindowRecord],
    app: str,
    figures_by_rung: dict[str, dict[str, Any]],
    groups_per_round: int,
) -> None:
    """A rung's speed as a share of the floor's, per round: its speed-up over response_model
    over the floor's in the same round (each against its own adjacent response_model window,
    so the machine's drift between the two groups cancels), by r/s and by app CPU."""
    if FLOOR_RUNG not in figures_by_rung:
        return
    for kind, key in (("rps", "share_of_floor"), ("cpu", "share_of_floor_by_cpu")):
        floor = speedups_by_round(records, app, FLOOR_RUNG, groups_per_round, kind)
        for rung, figures in figures_by_rung.items():
            own = speedups_by_round(records, app, rung, groups_per_round, kind)
            figures[key] = paired_ratio(own, floor).as_dict()


def comparison_figures(
    records: list[WindowRecord], apps: tuple[str, ...], rungs: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """Per rung, each app's r/s over the baseline app's (v2 over v1), paired by group."""
    if BASELINE not in apps:
        return {}
    comparisons: dict[str, dict[str, Any]] = {}
    for app in (app for app in apps if app != BASELINE):
        per_rung = {}
        for rung in rungs:
            per_rung[rung] = window_ratio(
                records, LADDER_SCENARIO, rung_slot(app, rung), rung_slot(BASELINE, rung)
            ).as_dict()
        comparisons[f"{app}_over_{BASELINE}"] = per_rung
    return comparisons


def ladder_flags(
    ladder: dict[str, dict[str, dict[str, Any]]],
    comparisons: dict[str, dict[str, Any]],
    records: list[WindowRecord],
    locust: LocustRun,
    load_cores: int,
    calibration: dict[str, Any] | None,
) -> list[str]:
    """The benchmark's own checks (loadtest/analysis/flags.py), said per app: failures, empty or
    crowded windows, a busy load generator, intervals too wide or missing; and the rungs whose
    r/s is the load generator's."""
    flags = []
    labelled: list[tuple[str, PairedRatio]] = []
    for app, rungs in ladder.items():
        failed = [
            f"{rung} {figures['failures']}"
            for rung, figures in rungs.items()
            if figures["failures"]
        ]
        if failed:
            flags.append(f"{app}: failed requests (not counted as throughput): {', '.join(failed)}")
        app_windows = [record for record in records if record.arm == app]
        flags += [f"{app}: {flag}" for flag in window_flags(app_windows)]
        load_bound = [rung for rung, figures in rungs.items() if figures["load_bound"]]
        if load_bound:
            ceiling = (
                f" (locust reached {calibration['rps']:,.0f} r/s on a trivial endpoint; these "
                "bodies cost it more)"
                if calibration
                else ""
            )
            flags.append(
                f"{app}: {LOAD_BOUND_MARK} the app kept under {SATURATION_LIMIT:.0%} of its CPU "
                f"busy on {', '.join(load_bound)}: their r/s, r/s speed-ups and r/s shares are "
                f"the load generator's limit, not the app's{ceiling}. Read their CPU columns: "
                "an app with spare CPU pays a little more per request (more event-loop "
                "wake-ups), so their CPU speed-ups, if anything, understate them"
            )
        for rung, figures in rungs.items():
            for key, what in (("speedup", "r/s"), ("cpu_speedup", "CPU")):
                if key in figures and not (key == "speedup" and figures["load_bound"]):
                    labelled.append((f"{app} {rung} ({what})", PairedRatio.from_dict(figures[key])))
    for name, per_rung in comparisons.items():
        labelled += [
            (f"{rung} {name.replace('_over_', '/')}", PairedRatio.from_dict(figures))
            for rung, figures in per_rung.items()
        ]
    flags += locust_flags(locust, load_cores, "ladder")
    return flags + ratio_flags(labelled, "raise --pairs")


def build_ladder_results(
    settings: LadderSettings,
    setup: PairedSetup,
    *,
    rungs: tuple[str, ...],
    records: list[WindowRecord],
    locust: LocustRun,
) -> dict[str, Any]:
    """What results.json holds after its header (modes/session.py)."""
    pinning, calibration = setup.pinning, setup.calibration
    groups_per_round = len(rungs) - 1  # one group per rung above response_model
    comparisons = comparison_figures(records, settings.apps, rungs)
    ladder: dict[str, dict[str, dict[str, Any]]] = {}
    for app in settings.apps:
        ladder[app] = {rung: rung_figures(records, app, rung, groups_per_round) for rung in rungs}
        add_floor_shares(records, app, ladder[app], groups_per_round)
    return {
        "pinning": pinning.as_dict(),
        "settings": describe_settings(settings),
        "versions": setup.versions,
        "rungs": {rung: RUNGS[rung] for rung in rungs},
        "ladder": ladder,
        "comparisons": comparisons,
        "calibration": calibration,
        "locust": locust.summary(),
        "flags": ladder_flags(
            ladder,
            comparisons,
            records,
            locust,
            min(settings.load_processes, len(pinning.load_cpus)) or 1,
            calibration,
        ),
        "windows": [record.as_dict() for record in records],
    }


def describe_settings(settings: LadderSettings) -> dict[str, object]:
    """The settings that shape a ladder run, for results.json."""
    return {
        "apps": list(settings.apps),
        "rounds": settings.pairs,
        "window_s": settings.window_s,
        "settle_s": settings.settle_s,
        "warmup_s_per_arm": settings.warmup_s,
        "users": settings.users,
        "workers": settings.workers,
        "load_processes": settings.load_processes,
        "pin": settings.pin,
    }
