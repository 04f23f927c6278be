"""How many workers fit in a memory limit: per target, arm and server, a straight line through
the tree's median PSS after every route (MiB) against N, least squares over the measured N: its
intercept is what the tree holds besides its workers (the master, what the workers share), its
slope what one more worker adds. The most workers that fit in L MiB: floor((L - a) / b).

The memory is the tree's after every route and a full collection in every worker: the state a
preloaded app's workers reach once their collectors have run (commons/probes/workers.py).
`uvicorn --workers 1` serves from the supervisor's own process (it spawns no worker), so a line
through N = 1 and larger N would join two layouts: the line goes through the counts of 2 and
more wherever two of them were measured."""

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
    if slope <= 0:
        raise ValueError(f"memory falls as workers are added (slope {slope:.2f} MiB)")
    return max(floor((limit_mib - intercept) / slope), 0)


def fits_of(
    settings: WorkersSettings, subjects: list[Subject], samples: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """target -> "arm server" -> the measured points, the line, and per limit the workers that
    fit (None where the line cannot be drawn: one worker count, or a tree unfinished)."""
    fits: dict[str, dict[str, Any]] = {}
    for target in settings.targets:
        by_choice: dict[str, Any] = {}
        for arm in settings.apps:
            for server in settings.servers:
                points = {}
                for workers in settings.workers:
                    values = [
                        sample[FIT_METRIC]
                        for sample in samples
                        if sample["target"] == target.name
                        and sample["subject"] == Subject(arm, server, workers).key
                        and sample.get(FIT_METRIC) is not None
                    ]
                    if values:
                        points[workers] = median(values)
                several = {n: value for n, value in points.items() if n >= 2}
                line = (
                    line_through(several if len(several) >= 2 else points)
                    if len(points) == len(settings.workers)
                    else None
                )
                fit: dict[str, Any] = {
                    "arm": arm,
                    "server": server,
                    "points": {str(n): value for n, value in points.items()},
                    "intercept_mib": None,
                    "per_worker_mib": None,
                    "workers_in": {str(limit): None for limit in settings.limits_mib},
                }
                if line is not None and line[1] > 0:
                    fit["intercept_mib"], fit["per_worker_mib"] = line
                    fit["workers_in"] = {
                        str(limit): workers_in(limit, *line) for limit in settings.limits_mib
                    }
                by_choice[f"{arm} {server}"] = fit
        fits[target.name] = by_choice
    return fits


def best_choice(fits: dict[str, Any], arm: str, limit_mib: int) -> tuple[str, int] | None:
    """The arm's server that fits the most workers in the limit (the first listed on a tie)."""
    best: tuple[str, int] | None = None
    for fit in fits.values():
        fitted = fit["workers_in"].get(str(limit_mib))
        if fit["arm"] == arm and fitted is not None and (best is None or fitted > best[1]):
            best = (fit["server"], fitted)
    return best
