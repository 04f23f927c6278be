"""Every figure a run compares between a Pydantic 2 subject and v1, as one `Seen` each: scale's
ratios (start-up, memory, first requests: above 1 costs more) and the gains of the shapes mode's
and the sweep's cells (v2's r/s, or CPU per request, over v1's: below 1 is slower). A figure is
a loss in a run when its 95% interval lies wholly on the losing side of 1, or when the Pydantic 2
subject did not finish (over its bound, or an error) where v1 did."""

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from loadtest.generated.figures import PHASES
from loadtest.lab.arms import BASELINE
from loadtest.output.text import bytes_label, format_number, format_ratio


@dataclass(frozen=True)
class Figure:
    """One figure a run compares, named alike in every run that has it."""

    mode: str  # "scale", "shapes", "sweep"
    shape: str  # scale's shape, or "request path" for the cells
    what: str  # "300 models", "union20-tagged-1000 (GET, 88.9 KB)"
    measure: str  # "start-up to first /health", "r/s"
    comparison: str  # "v2/v1", "v2+defer_build/v1"


@dataclass(frozen=True)
class Seen:
    figure: Figure
    run: str  # the run folder's name
    lost: bool
    times_costlier: float  # how many times v2's cost is v1's (inf: v2 did not finish)
    text: str  # the ratio as the table shows it
    detail: str  # the two sides' own figures


def examine(run: str, results: dict[str, Any]) -> list[Seen]:
    return list(EXAMINERS[results["kind"]](run, results))


# A phase that did not finish, as one figure: what it leaves out, from where it stopped on.
UNFINISHED_MEASURES = {
    "start": "every figure (the app did not start)",
    "routes": "every route once, and /openapi.json",
    "openapi": "first /openapi.json",
}


def scale_figures(run: str, results: dict[str, Any]) -> Iterator[Seen]:
    scale = results["scale"]
    shape = scale.get("shape", "service")
    label = scale.get("size_label", "models")
    subjects = scale["subjects"]
    for name, comparison in scale["ratios"].items():
        key, reference = comparison["subject"], comparison["reference"]
        if subjects[reference]["arm"] != BASELINE or subjects[key]["arm"] == BASELINE:
            continue  # a variant over its own arm: not a comparison of the majors
        for size, by_metric in comparison["by_models"].items():
            mine, theirs = scale["figures"][key][size], scale["figures"][reference][size]
            stopped = first_unfinished_phase(mine)
            for metric, ratio in by_metric.items():
                facts = scale["metrics"][metric]
                if stopped is not None and metric in PHASES_FROM[stopped]:
                    continue  # counted once, below
                figure = Figure("scale", shape, f"{size} {label}", facts["label"], name)
                if ratio.get("estimate") is not None:
                    low = ratio.get("ci95_low")
                    detail = (
                        f"{reference} {side(theirs[metric], facts)}, "
                        f"{key} {side(mine[metric], facts)}"
                    )
                    lost = low is not None and low > 1
                    yield Seen(figure, run, lost, ratio["estimate"], format_ratio(ratio), detail)
            if stopped is not None:
                first = SHOWN_OF_PHASE[stopped]
                facts = scale["metrics"][first]
                measure = UNFINISHED_MEASURES[stopped]
                figure = Figure("scale", shape, f"{size} {label}", measure, name)
                finished = theirs[first].get("median") is not None
                detail = (
                    f"{reference} {side(theirs[first], facts)}, {key} {side(mine[first], facts)}"
                )
                yield Seen(figure, run, finished, math.inf, "did not finish", detail)


# What a phase that did not finish shows of the reference that did: its headline figure.
SHOWN_OF_PHASE = {"start": "to_health_s", "routes": "routes_s", "openapi": "openapi_s"}
# Per phase, its metrics and those of the phases after it (which it leaves out).
PHASES_FROM = {
    phase: [metric for later in list(PHASES)[index:] for metric in PHASES[later]]
    for index, phase in enumerate(PHASES)
}


def first_unfinished_phase(figures: dict[str, Any]) -> str | None:
    """The first phase with no figures because it (or the app) did not finish."""
    for phase, metrics in PHASES.items():
        if any("unfinished" in figures[metric] for metric in metrics):
            return phase
    return None


def side(figures: dict[str, Any], facts: dict[str, Any]) -> str:
    if figures.get("median") is None:
        return figures.get("unfinished", "no figure")
    return f"{format_number(figures['median'], facts['digits'])} {facts['unit']}"


def cell_figures(run: str, results: dict[str, Any]) -> Iterator[Seen]:
    for cell in results["cells"]:
        for name, gain in cell["gains"].items():
            arm, reference = name.split("/")
            if reference != BASELINE:
                continue
            # A gain is v2's r/s over v1's (or v1's CPU per request over v2's); its inverse is
            # what v2 costs against v1, read the same way as scale's ratios.
            measure = "app CPU per request" if gain.get("by") == "cpu" else "time per request"
            # The answer's bytes for a read, the body's for a write (as the sweep plots them).
            read = cell.get("read", cell["shape"] in ("flat", "nested"))
            size = cell["response_bytes"] if read else cell["request_bytes"]
            what = f"{cell['name']} ({cell['method']}, {bytes_label(size)})"
            figure = Figure(results["kind"], "request path", what, measure, name)
            low, high = gain.get("ci95_low"), gain.get("ci95_high")
            if not gain.get("estimate") or not low or not high:
                continue
            cost = 1 / gain["estimate"]
            arms = cell["arms"]
            detail = (
                f"{reference} {arms[reference]['rps']:,.0f} r/s, {arm} {arms[arm]['rps']:,.0f} r/s"
            )
            text = f"{cost:.2f}x [{1 / high:.2f}–{1 / low:.2f}]"
            yield Seen(figure, run, high < 1, cost, text, detail)


EXAMINERS: dict[str, Callable[[str, dict[str, Any]], Iterator[Seen]]] = {
    "scale": scale_figures,
    "shapes": cell_figures,
    "sweep": cell_figures,
}
EXAMINED_KINDS = tuple(EXAMINERS)


@dataclass(frozen=True)
class Loss:
    figure: Figure
    seen: list[Seen]  # every run that has the figure, the losing ones first

    @property
    def lost_in(self) -> int:
        return sum(seen.lost for seen in self.seen)

    @property
    def least_costlier(self) -> float:
        """The mildest of its losing runs: the table's order, worst first."""
        return min(seen.times_costlier for seen in self.seen if seen.lost)


@dataclass(frozen=True)
class Verdict:
    runs: list[str]
    examined: int  # figures, each counted once however many runs hold it
    in_two_runs: int  # figures held by two runs or more: the only ones that can replicate
    replicated: list[Loss]  # lost in two runs or more, worst first
    once: list[Loss]  # lost in one run only: chance, until a second run shows it


def verdict(seen_by_run: dict[str, list[Seen]]) -> Verdict:
    by_figure: dict[Figure, list[Seen]] = {}
    for seen_list in seen_by_run.values():
        for seen in seen_list:
            by_figure.setdefault(seen.figure, []).append(seen)
    losses = [
        Loss(figure, sorted(seen, key=lambda item: not item.lost))
        for figure, seen in by_figure.items()
        if any(item.lost for item in seen)
    ]
    losses.sort(key=lambda loss: -loss.least_costlier)
    return Verdict(
        runs=list(seen_by_run),
        examined=len(by_figure),
        in_two_runs=sum(len(seen) >= 2 for seen in by_figure.values()),
        replicated=[loss for loss in losses if loss.lost_in >= 2],
        once=[loss for loss in losses if loss.lost_in == 1],
    )
