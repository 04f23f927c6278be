"""Read the runs, find the figures where Pydantic 2 loses, print them worst first."""

import math
from pathlib import Path

from rich.console import Console

from loadtest.lab.errors import LabError
from loadtest.modes.losses.examine import EXAMINED_KINDS, Loss, Seen, Verdict, examine, verdict
from loadtest.modes.registry import KINDS
from loadtest.output.results_file import read_results, reporting_from
from loadtest.output.text import markdown_table, print_table

HEADER = ("shape", "figure", "measure", "v2 over v1, per run", "what each side took (first run)")


def show_losses(
    run_dirs: tuple[Path, ...], markdown: bool, console: Console, summary: bool = False
) -> Verdict:
    seen_by_run: dict[str, list[Seen]] = {}
    skipped = []
    for run_dir in run_dirs:
        results = read_results(run_dir, KINDS)
        name = run_dir.resolve().name
        if results["kind"] not in EXAMINED_KINDS:
            skipped.append(f"{name} ({results['kind']})")
            continue
        with reporting_from(run_dir / "results.json"):
            seen_by_run[name] = examine(name, results)
    if not seen_by_run:
        raise LabError(
            f"none of these runs is of a kind the losses read ({', '.join(EXAMINED_KINDS)}); "
            "e.g. ./test.sh losses results/*-scale results/*-shapes"
        )
    found = verdict(seen_by_run)
    lines = summary_lines(found, skipped)
    header = SUMMARY_HEADER if summary else HEADER
    rows = summary_rows(found.replicated) if summary else [row(loss) for loss in found.replicated]
    once = summary_rows(found.once) if summary else [row(loss) for loss in found.once]
    if summary:
        lines.append(
            "Summary: the headline measures only (start-up, memory after every route, the first "
            "/openapi.json, time or CPU per request, and what did not finish), every comparison "
            "of a Pydantic 2 arm with v1 in one row."
        )
    if markdown:
        console.print("\n\n".join(lines), highlight=False, soft_wrap=True)
        if rows:
            console.print("\n" + markdown_table(header, rows), highlight=False, soft_wrap=True)
        if once:
            console.print(f"\n{ONCE_TITLE}:\n", highlight=False, soft_wrap=True)
            console.print(markdown_table(header, once), highlight=False, soft_wrap=True)
        return found
    for line in lines:
        console.print(line, highlight=False)
    if rows:
        print_table(console, header, rows, title="Where Pydantic 2 costs more, worst first")
    if once:
        print_table(console, header, once, title=ONCE_TITLE)
    return found


ONCE_TITLE = "Lost in one run only: not listed as a loss until a second run shows it too"


def summary_lines(found: Verdict, skipped: list[str]) -> list[str]:
    lines = [
        f"{found.examined} figures examined in {len(found.runs)} runs "
        f"({', '.join(found.runs)}); {found.in_two_runs} of them in two runs or more, the only "
        "ones that can replicate.",
        f"Pydantic 2 costs more in {len(found.replicated)} of them in two runs or more"
        + (" (listed below, worst first)" if found.replicated else "")
        + f"; {len(found.once)} more lost in one run only.",
    ]
    if skipped:
        lines.append(f"Not read (no figures of v2 against v1 here): {', '.join(skipped)}.")
    return lines


def row(loss: Loss) -> list[str]:
    figure = loss.figure
    first = next(seen for seen in loss.seen if seen.lost)
    per_run = "; ".join(seen.text + ("" if seen.lost else " (not lost)") for seen in loss.seen)
    return [
        f"{figure.mode} {figure.shape}",
        figure.what,
        f"{figure.measure}, {figure.comparison}",
        per_run,
        first.detail,
    ]


SUMMARY_HEADER = ("shape", "figure", "measure", "v2 over v1", "arms", "what each side took")
# What a summary keeps: the figures a reader weighs first.
HEADLINE_MEASURES = (
    "every figure (the app did not start)",
    "every route once, and /openapi.json",
    "first /openapi.json",
    "start-up to first /health",
    "memory after every route once, RSS",
    "time per request",
    "app CPU per request",
)


def summary_rows(losses: list[Loss]) -> list[list[str]]:
    """One row per shape, size and headline measure: every comparison with v1 (v2, v2-latest,
    their variants) and every losing run in one range, worst first."""
    # Comparisons that did not finish are a row apart from those that finished slower.
    groups: dict[tuple[str, str, str, str, bool], list[Loss]] = {}
    for loss in losses:
        figure = loss.figure
        if figure.measure in HEADLINE_MEASURES:
            unfinished = math.isinf(loss.least_costlier)
            key = (figure.mode, figure.shape, figure.what, figure.measure, unfinished)
            groups.setdefault(key, []).append(loss)
    ordered = sorted(groups.items(), key=lambda item: -min(loss.least_costlier for loss in item[1]))
    rows = []
    for (mode, shape, what, measure, _), group in ordered:
        costs = [seen.times_costlier for loss in group for seen in loss.seen if seen.lost]
        if math.inf in costs:
            ratio = "did not finish"
        else:
            low, high = f"{min(costs):.2f}x", f"{max(costs):.2f}x"
            ratio = low if low == high else f"{low}–{high}"
        arms = sorted({loss.figure.comparison.split("/")[0] for loss in group})
        # The plain v2/v1 comparison's figures where it lost, else the first comparison's.
        shown = next((loss for loss in group if loss.figure.comparison == "v2/v1"), group[0])
        first = next(seen for seen in shown.seen if seen.lost)
        rows.append([f"{mode} {shape}", what, measure, ratio, ", ".join(arms), first.detail])
    return rows
