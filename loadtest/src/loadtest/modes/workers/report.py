"""The workers mode's report: in the terminal, report.md and report.html (with workers.svg),
from results.json alone. First how many workers fit in each limit, and whether the check under
a real limit held; then each tree's figures, and each arm over v1."""

from html import escape
from pathlib import Path
from typing import Any

from matplotlib.lines import Line2D
from rich.console import Console

from loadtest.output.charts import (
    LEGEND_FONTSIZE,
    REFERENCE_COLOUR,
    Axes,
    Figure,
    colour,
    plt,
    to_svg,
)
from loadtest.output.html import figure, html_table, page
from loadtest.output.run_folder import write_reports_into
from loadtest.output.text import (
    format_number,
    format_ratio,
    markdown_table,
    print_table,
    versions_sentence,
)

TITLE = "Several workers"
NOTE = (
    "PSS (proportional set size): every page a process maps, divided by the number of "
    "processes that map it, so the PSS of a tree adds up to the memory it holds; RSS summed "
    "over the tree counts a shared page once per process. USS: the pages no other process "
    "maps. File-backed pages (the interpreter, its libraries) are shared with every process "
    "that maps the same files, the harness included: their PSS is a lower bound; the "
    "anonymous part, where the app's objects and schemas live, is the tree's alone. "
    "Collected: after every route and a full garbage collection in every worker. The fit: a "
    "straight line through the tree's PSS after the collection against the worker count, N "
    "of 2 and more (least squares); the workers that fit: floor((limit - base) / per worker). "
    "A memory cgroup charges a few MiB more or less than the tree's PSS (page tables and "
    "socket buffers it charges; page cache read in earlier by other processes it does not): "
    "leave a margin."
)
ROUNDS_NOTE = (
    "Figures: the median over the rounds (the range in parentheses where the rounds differ). "
    "Ratios: each arm's figure over v1's under the same server and worker count, paired by "
    "round, median of the rounds (the rounds' range in parentheses; a 95% interval from 6 "
    "rounds)."
)
ONE_ROUND_NOTE = (
    "Figures and ratios (each arm's figure over v1's under the same server and worker count) "
    "are one round's: no range, no interval (--rounds 6 gives 95% intervals)."
)


def note(results: dict[str, Any]) -> str:
    many = results["settings"]["rounds"] > 1
    return f"{NOTE} {ROUNDS_NOTE if many else ONE_ROUND_NOTE}"


SERVER_STYLES: dict[str, tuple[Any, str]] = {  # line style and marker per server
    "uvicorn": ("-", "o"),
    "gunicorn": (":", "v"),
    "gunicorn-preload": ("--", "s"),
    "gunicorn-preload-freeze": ("-.", "D"),
}


def spread(figures: dict[str, Any], digits: int) -> str:
    if figures.get("median") is None:
        return "–"
    text = format_number(figures["median"], digits)
    if figures["min"] != figures["max"]:
        text += (
            f" ({format_number(figures['min'], digits)}–{format_number(figures['max'], digits)})"
        )
    return text


def fit_rows(results: dict[str, Any], target: str) -> tuple[list[str], list[list[str]]]:
    limits = results["settings"]["limits_mib"]
    header = ["arm, server", "per worker MiB", "base MiB", *(f"in {mib_label(m)}" for m in limits)]
    rows = []
    for name, fit in results["workers"]["fits"][target].items():
        rows.append(
            [
                name,
                format_number(fit["per_worker_mib"], 1),
                format_number(fit["intercept_mib"], 1),
                *(
                    "–" if fit["workers_in"][str(m)] is None else str(fit["workers_in"][str(m)])
                    for m in limits
                ),
            ]
        )
    return header, rows


def mib_label(mib: int) -> str:
    return f"{mib // 1024} GiB" if mib % 1024 == 0 else f"{mib} MiB"


def best_per_arm(results: dict[str, Any], target: str, limit: int) -> dict[str, tuple[str, int]]:
    best: dict[str, tuple[str, int]] = {}
    for fit in results["workers"]["fits"][target].values():
        fitted = fit["workers_in"][str(limit)]
        if fitted is not None and (fit["arm"] not in best or fitted > best[fit["arm"]][1]):
            best[fit["arm"]] = (fit["server"], fitted)
    return best


def summary_lines(results: dict[str, Any]) -> list[str]:
    lines = []
    for target in results["settings"]["targets"]:
        parts = []
        for limit in results["settings"]["limits_mib"]:
            best = best_per_arm(results, target, limit)
            if best:
                parts.append(
                    f"in {mib_label(limit)}, "
                    + ", ".join(f"{arm} {n} ({server})" for arm, (server, n) in best.items())
                )
        if parts:
            lines.append(f"{target}: the most workers that fit: " + "; ".join(parts) + ".")
        else:
            whys = sorted({fit["why"] for fit in results["workers"]["fits"][target].values()})
            lines.append(f"{target}: {'; '.join(whys)}.")
    for check in results["workers"]["limit_checks"]:
        lines.append("Under a real limit: " + check_line(check, results) + ".")
    return lines


def attempt_line(attempt: dict[str, Any]) -> str:
    """`21 workers: did not stay up; worker 19931 is gone; 1 killed by the limit; ...`"""
    parts = [f"{attempt['workers']} workers: {attempt['outcome']}"]
    if "failure" in attempt:
        parts.append(attempt["failure"])
    else:
        parts.append(
            f"{attempt['answered']:,} requests answered, {attempt['failed']} not"
            + (f" (first: {attempt['first_failure']})" if attempt["first_failure"] else "")
        )
        parts.append(f"{attempt['restarted']} restarted")
    parts.append(f"{attempt['oom_kills']} killed by the limit")
    if attempt.get("peak_mib") is not None:
        parts.append(f"the cgroup's peak {attempt['peak_mib']:.0f} MiB")
    if attempt.get("pss_loaded_mib") is not None:
        parts.append(f"the tree's PSS {attempt['pss_loaded_mib']:.0f} MiB")
    return "; ".join(parts)


def check_line(check: dict[str, Any], results: dict[str, Any]) -> str:
    if "server" not in check or check["outcome"].startswith("not run"):
        return f"{check['arm']}: {check['outcome']}"
    text = (
        f"{check['arm']}, {check['predicted']} workers predicted under {check['server']} in "
        f"{mib_label(check['limit_mib'])}: {check['outcome']}"
    )
    text += " (" + "; ".join(attempt_line(attempt) for attempt in check["attempts"]) + ")"
    fit = results["workers"]["fits"][check["target"]].get(f"{check['arm']} {check['server']}")
    last = check["attempts"][-1] if check["attempts"] else {}
    if fit and fit["per_worker_mib"] and last.get("outcome") == "stayed up" and last["peak_mib"]:
        spare = check["limit_mib"] - last["peak_mib"]
        if spare < fit["per_worker_mib"]:
            text += (
                f"; {spare:.0f} MiB to spare at its peak, less than one worker's "
                f"{fit['per_worker_mib']:.0f}: deploy one or two fewer"
            )
    return text


def figure_rows(results: dict[str, Any], target: str) -> tuple[list[str], list[list[str]]]:
    metrics = results["workers"]["metrics"]
    shown = [name for name in metrics if name != "warm_requests"]
    header = ["arm, server, workers", *(short_label(name) for name in shown)]
    rows = []
    for key, figures in results["workers"]["figures"][target].items():
        if "unfinished" in figures and figures[shown[0]]["median"] is None:
            rows.append([key, figures["unfinished"], *("" for _ in shown[1:])])
            continue
        rows.append([key, *(spread(figures[name], metrics[name]["digits"]) for name in shown)])
    return header, rows


SHORT_LABELS = {
    "ready_s": "ready s",
    "pss_idle_mib": "PSS idle",
    "pss_routes_mib": "PSS routes",
    "pss_collected_mib": "PSS collected",
    "pss_anon_collected_mib": "anon",
    "pss_file_collected_mib": "file",
    "rss_sum_collected_mib": "RSS sum",
    "worker_uss_collected_mib": "worker USS",
    "master_uss_collected_mib": "master USS",
}


def short_label(metric: str) -> str:
    return SHORT_LABELS.get(metric, metric)


def ratio_rows(results: dict[str, Any], target: str) -> tuple[list[str], list[list[str]]]:
    ratios = results["workers"]["ratios"][target]
    metrics = ("pss_routes_mib", "pss_collected_mib", "worker_uss_collected_mib", "ready_s")
    header = ["arm, server, workers / v1", *(short_label(metric) for metric in metrics)]
    rows = [
        [name.removesuffix(" / v1"), *(ratio_text(found[metric]) for metric in metrics)]
        for name, found in ratios.items()
    ]
    return header, rows


def ratio_text(ratio: dict[str, Any]) -> str:
    """With 6 rounds or more, the ratio and its 95% interval; with fewer, the range of the
    rounds' ratios in parentheses (memory moves little from one round to the next)."""
    if ratio["ci95_low"] is not None or ratio["estimate"] is None:
        return format_ratio(ratio, mark=False)
    text = format_ratio(ratio, mark=False)
    if ratio["pair_min"] != ratio["pair_max"]:
        text += f" ({ratio['pair_min']:.2f}–{ratio['pair_max']:.2f})"
    return text


def heading(results: dict[str, Any]) -> str:
    settings = results["settings"]
    return (
        f"{TITLE}: {', '.join(settings['apps'])} — {', '.join(settings['servers'])}, "
        f"{','.join(map(str, settings['workers']))} "
        f"{'worker' if settings['workers'] == [1] else 'workers'}, {settings['rounds']} "
        f"{'round' if settings['rounds'] == 1 else 'rounds'}, on {results['host']['cpu_model']}"
    )


def versions_line(results: dict[str, Any]) -> str:
    return versions_sentence(results["workers"]["versions"])


def print_report(results: dict[str, Any], console: Console) -> None:
    console.print(heading(results), highlight=False)
    for line in summary_lines(results):
        console.print(line, highlight=False)
    for target in results["settings"]["targets"]:
        print_table(console, *fit_rows(results, target), title=f"{target}: workers that fit")
        print_table(console, *figure_rows(results, target), title=f"{target}: each tree (MiB, s)")
        if results["workers"]["ratios"][target]:
            print_table(console, *ratio_rows(results, target), title=f"{target}: over v1")
    console.print(versions_line(results), highlight=False)


def markdown(results: dict[str, Any]) -> str:
    parts = [f"# {heading(results)}", "", *summary_lines(results), "", versions_line(results), ""]
    for target in results["settings"]["targets"]:
        parts += [f"## {target}: workers that fit", "", markdown_table(*fit_rows(results, target))]
        parts += ["", f"## {target}: each tree (MiB, s)", ""]
        parts += [markdown_table(*figure_rows(results, target)), ""]
        if results["workers"]["ratios"][target]:
            parts += [f"## {target}: over v1", "", markdown_table(*ratio_rows(results, target))]
            parts += [""]
    parts += ["## Servers", ""]
    parts += [f"- `{name}`: {what}" for name, what in results["workers"]["servers"].items()]
    parts += ["", note(results), ""]
    return "\n".join(parts)


def draw_memory(ax: Axes, results: dict[str, Any], target: str) -> None:
    """The tree's PSS after every route and a collection against the worker count, per arm and
    server, with the limits as grey lines."""
    fits = results["workers"]["fits"][target]
    top = 0.0
    for fit in fits.values():
        points = {int(n): value for n, value in fit["points"].items()}
        if not points:
            continue
        style, marker = SERVER_STYLES.get(fit["server"], ("-", "o"))
        ax.plot(
            list(points),
            list(points.values()),
            linestyle=style,
            marker=marker,
            color=colour(fit["arm"]),
            label=f"{fit['arm']} {fit['server']}",
        )
        top = max(top, *points.values())
    for limit in results["settings"]["limits_mib"]:
        if limit <= top * 1.6:
            ax.axhline(limit, color=REFERENCE_COLOUR, linewidth=0.8)
            ax.annotate(
                mib_label(limit),
                (0, limit),
                xycoords=("axes fraction", "data"),
                xytext=(3, 2),
                textcoords="offset points",
                fontsize=8,
            )
    ax.set_xticks(results["settings"]["workers"])
    ax.set_xlabel("workers")
    ax.set_ylabel("PSS of the tree after the collection (MiB)")
    ax.set_ylim(bottom=0)
    ax.set_title(target, fontsize=10)
    ax.grid(axis="y", color=REFERENCE_COLOUR, linewidth=0.4)


def draw_fit(ax: Axes, results: dict[str, Any], target: str) -> None:
    """Per limit, the workers each arm and server fit, a bar each."""
    fits = [fit for fit in results["workers"]["fits"][target].values() if fit["per_worker_mib"]]
    limits = results["settings"]["limits_mib"]
    width = 0.8 / max(len(fits), 1)
    hatches = {
        "uvicorn": None,
        "gunicorn": "..",
        "gunicorn-preload": "//",
        "gunicorn-preload-freeze": "xx",
    }
    for place, fit in enumerate(fits):
        positions = [row + place * width for row in range(len(limits))]
        values = [fit["workers_in"][str(limit)] for limit in limits]
        bars = ax.bar(
            positions,
            values,
            width,
            color=colour(fit["arm"]),
            hatch=hatches.get(fit["server"]),
            edgecolor="white",
        )
        ax.bar_label(bars, fontsize=7, padding=2)
    ax.set_xticks(
        [row + width * (len(fits) - 1) / 2 for row in range(len(limits))],
        [mib_label(limit) for limit in limits],
    )
    ax.set_ylabel("workers that fit")
    ax.grid(axis="y", color=REFERENCE_COLOUR, linewidth=0.4)


def workers_figure(results: dict[str, Any]) -> Figure:
    targets = results["settings"]["targets"]
    fig, axes = plt.subplots(len(targets), 2, figsize=(11, 4.2 * len(targets)), squeeze=False)
    for row, target in enumerate(targets):
        draw_memory(axes[row][0], results, target)
        draw_fit(axes[row][1], results, target)
    handles = [
        Line2D(
            [],
            [],
            color=colour(fit["arm"]),
            linestyle=SERVER_STYLES[fit["server"]][0],
            marker=SERVER_STYLES[fit["server"]][1],
            label=name,
        )
        for name, fit in results["workers"]["fits"][targets[0]].items()
        if fit["server"] in SERVER_STYLES
    ]
    axes[0][1].legend(
        handles=handles,
        fontsize=LEGEND_FONTSIZE,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        borderaxespad=0,
    )
    fig.tight_layout()
    return fig


def html(results: dict[str, Any]) -> str:
    body = "".join(f'<p class="summary">{escape(line)}</p>' for line in summary_lines(results))
    body += f'<p class="note">{escape(versions_line(results))}</p>'
    body += figure(
        to_svg(workers_figure(results)),
        "Left: the tree's PSS after every route and a full collection in every worker, "
        "against its workers, per arm (colour) and "
        "server (line); grey: the limits. Right: the workers that fit in each limit, by the "
        "fit (uvicorn plain, gunicorn dotted, --preload hatched //, with gc.freeze crossed).",
    )
    for target in results["settings"]["targets"]:
        body += f"<h2>{escape(target)}: workers that fit</h2>" + html_table(
            *fit_rows(results, target)
        )
        body += f"<h2>{escape(target)}: each tree (MiB, s)</h2>" + html_table(
            *figure_rows(results, target)
        )
        if results["workers"]["ratios"][target]:
            body += f"<h2>{escape(target)}: over v1</h2>" + html_table(*ratio_rows(results, target))
    body += (
        "<h2>Servers</h2><ul>"
        + "".join(
            f"<li><code>{escape(name)}</code>: {escape(what)}</li>"
            for name, what in results["workers"]["servers"].items()
        )
        + "</ul>"
    )
    body += f'<p class="note">{escape(note(results))}</p>'
    return page(heading(results), body)


def write_reports(run_dir: Path, results: dict[str, Any]) -> list[Path]:
    charts = {"workers.svg": to_svg(workers_figure(results))}
    return write_reports_into(run_dir, markdown(results), html(results), charts)
