"""What a workers run says: per target and subject (arm, server, N), each figure's median and
range over the rounds; each arm over v1 under the same server and N, paired by round; the fit
(workers per limit) and its check."""

from typing import Any

from loadtest.analysis.ratio import paired_ratio
from loadtest.analysis.stats import summarize
from loadtest.generated.figures import Metric
from loadtest.lab.arms import BASELINE
from loadtest.lab.pinning import PinningPlan
from loadtest.modes.workers.servers import SERVERS
from loadtest.modes.workers.settings import WorkersSettings
from loadtest.modes.workers.tree import Subject

METRICS: dict[str, Metric] = {
    "ready_s": Metric("every worker ready", "s", 2),
    "pss_idle_mib": Metric("PSS of the tree, idle", "MiB", 1),
    "pss_routes_mib": Metric("PSS of the tree, after every route in every worker", "MiB", 1),
    "pss_collected_mib": Metric(
        "PSS of the tree, after every route and a full collection in every worker", "MiB", 1
    ),
    "pss_anon_collected_mib": Metric("of which anonymous", "MiB", 1),
    "pss_file_collected_mib": Metric("of which file-backed", "MiB", 1),
    "rss_sum_collected_mib": Metric("RSS summed over the tree, after the collection", "MiB", 1),
    "worker_uss_collected_mib": Metric("a worker's USS, after the collection (median)", "MiB", 1),
    "master_uss_collected_mib": Metric("the master's USS, after the collection", "MiB", 1),
    "warm_requests": Metric("requests until every worker served every route", "", 0),
}
# The figures each arm is compared with v1 on.
RATIO_METRICS = ("ready_s", "pss_routes_mib", "pss_collected_mib", "worker_uss_collected_mib")


def figures_of(samples: list[dict[str, Any]], target: str, key: str) -> dict[str, Any]:
    mine = [s for s in samples if s["target"] == target and s["subject"] == key]
    finished = [s for s in mine if "unfinished" not in s]
    why = next((s["unfinished"] for s in mine if "unfinished" in s), None)
    figures: dict[str, Any] = {
        metric: summarize([s[metric] for s in finished if s.get(metric) is not None])
        | {"samples": len(finished)}
        for metric in METRICS
    }
    if why:
        figures["unfinished"] = why
    return figures


def ratios_of(
    samples: list[dict[str, Any]], target: str, subject: Subject
) -> dict[str, dict[str, Any]]:
    reference = Subject(BASELINE, subject.server, subject.workers).key

    def by_round(key: str, metric: str) -> dict[int, float]:
        return {
            s["round"]: s[metric]
            for s in samples
            if s["target"] == target
            and s["subject"] == key
            and "unfinished" not in s
            and s.get(metric) is not None
        }

    return {
        metric: paired_ratio(by_round(subject.key, metric), by_round(reference, metric)).as_dict()
        for metric in RATIO_METRICS
    }


def build_workers_results(
    settings: WorkersSettings,
    subjects: list[Subject],
    samples: list[dict[str, Any]],
    fits: dict[str, dict[str, Any]],
    checks: list[dict[str, Any]],
    pinning: PinningPlan,
) -> dict[str, Any]:
    """What results.json holds after its header (modes/session.py)."""
    targets = [target.name for target in settings.targets]
    compared = [s for s in subjects if s.arm != BASELINE] if BASELINE in settings.apps else []
    return {
        "settings": {
            "apps": list(settings.apps),
            "targets": targets,
            "servers": list(settings.servers),
            "workers": list(settings.workers),
            "rounds": settings.rounds,
            "quick": settings.quick,
            "limits_mib": list(settings.limits_mib),
            "check_limit_mib": settings.check_limit_mib,
            "load_s": settings.load_s,
            "bound_s": settings.bound_s,
            "seed": settings.seed,
            "pinning": pinning.as_dict(),
        },
        "workers": {
            "metrics": {name: vars(metric) for name, metric in METRICS.items()},
            "servers": {name: SERVERS[name].summary for name in settings.servers},
            "subjects": {
                s.key: {"arm": s.arm, "server": s.server, "workers": s.workers} for s in subjects
            },
            "figures": {
                target: {s.key: figures_of(samples, target, s.key) for s in subjects}
                for target in targets
            },
            "ratios": {
                target: {f"{s.key} / {BASELINE}": ratios_of(samples, target, s) for s in compared}
                for target in targets
            },
            "fits": fits,
            "limit_checks": checks,
            "versions": versions_of(samples),
            "raw": samples,
        },
    }


def versions_of(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Per arm, what its /health reported (the same in every tree of it)."""
    versions: dict[str, Any] = {}
    for sample in samples:
        if "versions" in sample:
            versions.setdefault(sample["arm"], sample["versions"])
    return versions
