"""How many workers fit in a memory limit: per target, arm and server, a straight line through
the tree's median PSS after every route (MiB) against N, least squares over the measured N: its
intercept is what the tree holds besides its workers (the master, what the workers share), its
slope what one more worker adds. The most workers that fit in L MiB: floor((L - a) / b).

The memory is the tree's after every route and a full collection in every worker: the state a
preloaded app's workers reach once their collectors have run (commons/probes/workers.py).
`uvicorn --workers 1` serves from the supervisor's own process (it spawns no worker), so a line
through N = 1 and larger N would join two layouts: the line goes through the counts of 2 and
more only, and needs two of them."""

from math import floor
from statistics import median
from typing import Any

from loadtest.modes.workers.settings import WorkersSettings
from loadtest.modes.workers.tree import Subject

FIT_METRIC = "pss_collected_mib"


def line_through(points: dict[int, float]) -> tuple[float, float] | None:
    """(intercept, slope) by least squares; None with fewer than two worker counts."""
    if len(points) < 2:
        return None
    xs, ys = list(points), list(points.values())
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
    return mean_y - slope * mean_x, slope


def workers_in(limit_mib: float, intercept: float, slope: float) -> int:
    """The most workers whose tree the line keeps within the limit (0 if not even one)."""
    if slope <= 0:
        raise ValueError(f"memory falls as workers are added (slope {slope:.2f} MiB)")
    return max(floor((limit_mib - intercept) / slope), 0)


def fit_of(
    arm: str, server: str, rounds: dict[int, list[dict[str, Any]]], limits: tuple[int, ...]
) -> dict[str, Any]:
    """One arm and server: `rounds` maps each worker count to its samples (every round). The
    line goes through the counts of 2 and more whose every tree finished; `why` says why there
    is none."""
    points = {
        workers: median(sample[FIT_METRIC] for sample in samples)
        for workers, samples in rounds.items()
        if samples and all(sample.get(FIT_METRIC) is not None for sample in samples)
    }
    several = {workers: value for workers, value in points.items() if workers >= 2}
    fit: dict[str, Any] = {
        "arm": arm,
        "server": server,
        "points": {str(workers): value for workers, value in points.items()},
        "intercept_mib": None,
        "per_worker_mib": None,
        "workers_in": {str(limit): None for limit in limits},
        "why": None,
    }
    unfinished = sorted(workers for workers in rounds if workers not in points)
    line = line_through(several)
    if unfinished:
        fit["why"] = f"no fit: a tree of {unfinished[0]} workers did not finish every round"
    elif line is None:
        fit["why"] = "no fit: it needs two worker counts of 2 or more"
    elif line[1] <= 0:
        fit["why"] = f"no fit: memory falls as workers are added ({line[1]:.1f} MiB a worker)"
    else:
        fit["intercept_mib"], fit["per_worker_mib"] = line
        fit["workers_in"] = {str(limit): workers_in(limit, *line) for limit in limits}
    return fit


def fits_of(settings: WorkersSettings, samples: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """target -> "arm server" -> fit_of."""
    fits: dict[str, dict[str, Any]] = {}
    for target in settings.targets:
        fits[target.name] = {
            f"{arm} {server}": fit_of(
                arm,
                server,
                {
                    workers: [
                        sample
                        for sample in samples
                        if sample["target"] == target.name
                        and sample["subject"] == Subject(arm, server, workers).key
                    ]
                    for workers in settings.workers
                },
                settings.limits_mib,
            )
            for arm in settings.apps
            for server in settings.servers
        }
    return fits


def best_choice(fits: dict[str, Any], arm: str, limit_mib: int) -> tuple[str, int] | None:
    """The arm's server that fits the most workers in the limit, by its line (the first listed
    on a tie); None when no server of the arm has a line."""
    best: tuple[str, int] | None = None
    for fit in fits.values():
        if fit["arm"] != arm or fit["per_worker_mib"] is None:
            continue
        fitted = workers_in(limit_mib, fit["intercept_mib"], fit["per_worker_mib"])
        if best is None or fitted > best[1]:
            best = (fit["server"], fitted)
    return best
