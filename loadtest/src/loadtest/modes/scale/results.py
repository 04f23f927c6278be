"""What a scale run says: per subject and app size, each figure's median and range over the
fresh processes; ratios between subjects, paired by round; and what one more model costs."""

from typing import Any

from loadtest.analysis.ratio import paired_ratio
from loadtest.analysis.stats import summarize
from loadtest.generated.figures import METRICS
from loadtest.generated.shapes import SHAPES
from loadtest.generated.shapes.base import MODELS_PER_ROUTER, AppSpec
from loadtest.generated.subjects import Subject, comparisons
from loadtest.lab.arms import ARMS
from loadtest.lab.pinning import PinningPlan
from loadtest.modes.scale.settings import ScaleSettings

# What the summary, the per-model costs and the charts show.
HEADLINE_METRICS = ("to_health_s", "rss_idle_mib", "rss_routes_mib")


def subject_facts(subject: Subject, versions: dict[str, Any]) -> dict[str, Any]:
    return {
        "arm": subject.arm,
        "defer_build": subject.defer_build,
        "flat": subject.flat,
        "variant": subject.variant,
        "idiom": subject.idiom,
        "environment": ARMS[subject.arm].environment,
        "versions": versions,
    }


def figures_of(
    samples: list[dict[str, Any]], key: str, models: int, unfinished: str | None
) -> dict[str, Any]:
    """Per metric: median and range over the processes that finished; `unfinished` says why
    there are none (or why some did not finish)."""
    mine = [s for s in samples if s["subject"] == key and s["models"] == models]
    finished = [s for s in mine if "unfinished" not in s]
    why = unfinished or next((s["unfinished"] for s in mine if "unfinished" in s), None)
    figures = {}
    for metric in METRICS:
        values = [s[metric] for s in finished if s.get(metric) is not None]
        metric_why = why or next(
            (
                s["unfinished_metrics"][metric]
                for s in finished
                if metric in s.get("unfinished_metrics", {})
            ),
            None,
        )
        figures[metric] = (
            summarize(values)
            | {"samples": len(values)}
            | ({"unfinished": metric_why} if metric_why else {})
        )
    return figures


def per_model_costs(figures: dict[str, dict[str, Any]], models: list[int]) -> dict[str, Any]:
    """Per metric: the growth of the median from the smallest app to the biggest, per model
    added (milliseconds for times, KiB for memory): what one more model with its two routes
    costs."""
    smallest, biggest = min(models), max(models)
    if smallest == biggest:
        return {}
    costs = {}
    for metric, facts in METRICS.items():
        low = figures[str(smallest)][metric]["median"]
        high = figures[str(biggest)][metric]["median"]
        if low is None or high is None:
            continue
        per_model = (high - low) / (biggest - smallest)
        costs[metric] = per_model * (1000 if facts.unit == "s" else 1024)
    return costs


def summarise(
    subjects: list[Subject],
    models: tuple[int, ...],
    samples: list[dict[str, Any]],
    versions: dict[str, dict[str, Any]],
    seed: int,
    unfinished: dict[tuple[str, int], str] | None = None,
    apps: dict[str, dict[str, int]] | None = None,
) -> dict[str, Any]:
    """`models`: the sizes (models, or the shape's own axis); `unfinished`: (subject, size) ->
    why it has no figures; `apps`: per size, what the generated app holds."""
    keys = [subject.key for subject in subjects]
    unfinished = unfinished or {}
    figures = {
        key: {
            str(count): figures_of(samples, key, count, unfinished.get((key, count)))
            for count in models
        }
        for key in keys
    }
    ratios = {
        f"{key}/{reference}": {
            "subject": key,
            "reference": reference,
            "by_models": {
                str(count): metric_ratios(samples, key, reference, count) for count in models
            },
        }
        for key, reference in comparisons(subjects)
    }
    return {
        "seed": seed,
        "models": list(models),
        "apps": apps
        or {
            str(count): {
                "models": count,
                "routes": 2 * count,
                "routers": -(-count // MODELS_PER_ROUTER),
            }
            for count in models
        },
        "metrics": {name: vars(metric) for name, metric in METRICS.items()},
        "subjects": {
            subject.key: subject_facts(subject, versions[subject.key]) for subject in subjects
        },
        "figures": figures,
        "per_model": {key: per_model_costs(figures[key], list(models)) for key in keys},
        "ratios": ratios,
        "raw": samples,
    }


def metric_ratios(
    samples: list[dict[str, Any]], key: str, reference: str, count: int
) -> dict[str, Any]:
    """Every metric of `key` over `reference`'s at one size, paired by round (the processes that
    finished, and the figures they have)."""
    rounds = {
        who: {
            s["round"]: s
            for s in samples
            if s["subject"] == who and s["models"] == count and "unfinished" not in s
        }
        for who in (key, reference)
    }
    found = {}
    for metric in METRICS:
        mine, theirs = (
            {number: s[metric] for number, s in rounds[who].items() if s.get(metric) is not None}
            for who in (key, reference)
        )
        found[metric] = paired_ratio(mine, theirs).as_dict()
    return found


def median_of(scale: dict[str, Any], key: str, models: int, metric: str) -> float | None:
    return scale["figures"][key][str(models)][metric]["median"]


def build_scale_results(
    settings: ScaleSettings,
    subjects: list[Subject],
    samples: list[dict[str, Any]],
    versions: dict[str, dict[str, Any]],
    unfinished: dict[tuple[str, int], str],
    pinning: PinningPlan,
) -> dict[str, Any]:
    """What results.json holds after its header (modes/session.py)."""
    shape = SHAPES[settings.shape]
    scale = summarise(
        subjects,
        settings.sizes,
        samples,
        versions,
        settings.seed,
        unfinished,
        {str(size): app_facts(settings.shape, size, settings.seed) for size in settings.sizes},
    )
    return {
        "settings": {
            "apps": list(settings.apps),
            "shape": settings.shape,
            "models": list(settings.sizes),
            "size_label": shape.size_label,
            "defer_build": settings.defer_build,
            "flat": settings.flat,
            "variants": list(settings.variants),
            "quick": settings.quick,
            "processes": settings.plan.processes,
            "bound_s": settings.bound_s,
            "seed": settings.seed,
            "pinning": pinning.as_dict(),
        },
        "scale": scale
        | {"shape": settings.shape, "size_label": shape.size_label, "summary": shape.summary},
    }


def app_facts(shape: str, size: int, seed: int) -> dict[str, int]:
    """What the generated app of that size holds (alike in every idiom and variant)."""
    source = SHAPES[shape].build(AppSpec("v2", size, seed, False, None))
    routers = len({endpoint.group for endpoint in source.endpoints})
    return {"models": source.models, "routes": len(source.endpoints), "routers": routers}
