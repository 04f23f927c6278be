"""The latency mode's report in the terminal, report.md and report.html (with latency.svg),
from results.json alone: per scenario, each arm's percentiles at each rate, the ratios to the
baseline, the knees, the collections beside the tail, and the load generator's own limits."""

from html import escape
from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.analysis.limits import HTTPERF_TOLERANCE_MS, HTTPERF_TOLERANCE_SHARE
from loadtest.output.charts import Axes, Figure, colour, legend_outside, log_scale, plt, to_svg
from loadtest.output.html import figure, flags_section, html_table, page
from loadtest.output.run_folder import write_reports_into
from loadtest.output.text import (
    FLAG_MARK,
    format_number,
    format_ratio,
    markdown_table,
    print_flags,
    print_table,
    versions_sentence,
)

NOTE = (
    "Requests go out at due times fixed in advance (an open loop), whatever the answers do; "
    "latency is counted from the due time, so a stall is charged to every request due during "
    "it. Each arm's windows at a rate are pooled; p50/p90/p99 in ms with their 95% intervals "
    "in brackets, from resampling the rounds (the same rounds for every arm); ratios are the "
    "arm's pooled percentile over the baseline's, below 1 where the arm is faster. p99.9 and "
    "max stand on the samples named, and all of them on the requests answered (failures are "
    "flagged). Arrived / served: requests due, and answered, a second in the counted spans. "
    "Knee: the rate at which an arm's p99 passes ten times its p99 at the lowest rate, "
    "interpolated on log scales between the rates measured around it."
)


def ms(figure_: dict[str, Any] | None) -> str:
    """`4.21 [3.90–4.60]`: a pooled percentile with its interval."""
    if not figure_ or figure_.get("ms") is None:
        return "–"
    text = f"{figure_['ms']:.2f}"
    if figure_.get("ci95_low") is not None and figure_.get("ci95_high") is not None:
        text += f" [{figure_['ci95_low']:.2f}–{figure_['ci95_high']:.2f}]"
    return text


def rate_name(rate: dict[str, Any]) -> str:
    suffix = " (overload)" if rate["stage"] == "overload" else ""
    return f"{rate['label']}: {rate['rps']:,.0f} r/s{suffix}"


def arm_rows(scenario: dict[str, Any], arm: str) -> list[list[str]]:
    rows = []
    for rate in scenario["rates"].values():
        found = rate["arms"].get(arm)
        if found is None:
            continue
        tail = found["p99.9"]
        rows.append(
            [
                rate_name(rate),
                f"{found['arrival_rps']:,.0f} / {found['served_rps']:,.0f}",
                ms(found["p50"]),
                ms(found["p90"]),
                ms(found["p99"]),
                f"{format_number(tail['ms'], 2)} (n={tail['samples']:,})",
                format_number(found["max_ms"], 1),
            ]
        )
    return rows


ARM_HEADER = ["rate", "arrived / served r/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms"]


def ratio_text(ratio: dict[str, Any] | None, stage: str) -> str:
    """A ratio with its interval, ⚠ where the run flagged it (by the latency mode's limits; an
    overload rate's ratios are not: past capacity they compare queues that grow with the window,
    and no interval makes them a service's figure)."""
    text = format_ratio(ratio, mark=False)
    if ratio and ratio.get("flags") and stage == "paired":
        text += FLAG_MARK
    return text


def ratio_table(scenario: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    comparisons = sorted({name for rate in scenario["rates"].values() for name in rate["ratios"]})
    header = ["rate"] + [
        f"{name.replace('_over_', ' / ')} {percentile}"
        for name in comparisons
        for percentile in ("p50", "p90", "p99")
    ]
    rows = []
    for rate in scenario["rates"].values():
        cells = [
            ratio_text(rate["ratios"].get(name, {}).get(percentile), rate["stage"])
            for name in comparisons
            for percentile in ("p50", "p90", "p99")
        ]
        rows.append([rate_name(rate), *cells])
    return header, rows


def context_table(scenario: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Beside the tail: the app's CPU, its collections and their pauses, and how late the
    generator sent (its own scheduling error, of the order of a fast arm's latency)."""
    header = [
        "rate, arm",
        "app CPU busy",
        "collections (gen 0/1/2)",
        "pauses ms (gen 0/1/2)",
        "longest pause ms (gen 2)",
        "sent late ms p50 / p99",
        "behind",
    ]
    mixed = "beside" in scenario
    if mixed:
        header.append("large answers beside: answered / sent, p50 ms")
    rows = []
    for rate in scenario["rates"].values():
        for arm, found in rate["arms"].items():
            gc = found["gc"]
            late = found["lateness_ms"]
            row = [
                f"{rate['label']}, {arm}",
                "–" if found["app_cpu_busy"] is None else f"{found['app_cpu_busy']:.0%}",
                " / ".join(str(count) for count in gc["collections"]),
                " / ".join(f"{pause:.1f}" for pause in gc["pause_ms"]),
                f"{gc['longest_ms'][2]:.1f}" if gc["collections"][2] else "–",
                f"{format_number(late['p50'], 3)} / {format_number(late['p99'], 3)}",
                f"{found['windows_behind']} of {found['windows']}",
            ]
            if mixed:
                row.append(beside_text(found.get("beside")))
            rows.append(row)
    return header, rows


def beside_text(beside: dict[str, Any] | None) -> str:
    """The large answers asked beside an arm's windows at a rate: answered of sent, their
    median latency, and failures by count."""
    if beside is None:
        return "–"
    failed = sum(beside["failures"].values())
    return f"{beside['completed']} / {beside['sent']}, {format_number(beside['p50_ms'], 1)}" + (
        f" ({failed} failed)" if failed else ""
    )


HTTPERF_HEADER = ["arm", "p50 ms: lab / httperf", "p99 ms: lab / httperf [95% CI]", "agree"]


def interval_text(figures: dict[str, Any], key: str, digits: int) -> str:
    value = f"{figures[key]:.{digits}f}"
    low, high = figures.get(f"{key.removesuffix('_ms')}_ci95") or (None, None)
    return value if low is None or high is None else f"{value} [{low:.1f}–{high:.1f}]"


def httperf_rows(check: dict[str, Any]) -> list[list[str]]:
    rows = []
    for arm, comparison in check["comparison"].items():
        if "p50" not in comparison or "p99" not in comparison:
            rows.append([arm, "–", "–", "no answers to compare"])
            continue
        p50, p99 = comparison["p50"], comparison["p99"]
        agree = p50["agree"] and p99["agree"]
        rows.append(
            [
                arm,
                f"{p50['lab_ms']:.2f} / {p50['httperf_ms']:.1f}",
                f"{interval_text(p99, 'lab_ms', 1)} / {interval_text(p99, 'httperf_ms', 1)}",
                f"yes ({p99.get('by', 'within the tolerance')})" if agree else "no",
            ]
        )
    return rows


def httperf_title(scenario: dict[str, Any]) -> str | None:
    """The check's title, or None where it did not run; why it was skipped, where it was."""
    check = scenario.get("httperf")
    if not check:
        return None
    if "skipped" in check:
        return f"{scenario['label']}: no httperf check ({check['skipped']})"
    return (
        f"{scenario['label']}: httperf at {check['rate']} ({check['rps']:,.0f} r/s, "
        f"{check['duration_s']:g} s per arm and tool in {check.get('rounds', 1)} alternating "
        "turns), beside the lab's generator"
    )


HTTPERF_CAPTION = (
    "Both tools open a connection per request here, taking turns at the same rate; "
    "httperf starts its clock when it opens the connection, the lab's generator at the due "
    "time; httperf's percentiles are 1 ms bucket midpoints. They agree when within "
    f"{HTTPERF_TOLERANCE_MS:g} ms or {HTTPERF_TOLERANCE_SHARE:.0%} of the lab's figure, or, for "
    "a p99 set by a few full collections, when the two tools' 95% intervals over their turns "
    "overlap."
)


def knee_text(knee: dict[str, Any]) -> str:
    low_load = format_number(knee["low_load_p99_ms"], 2)
    if knee["rps"] is None:
        return f"past {knee['beyond_rps']:,.0f} r/s (p99 at the lowest rate {low_load} ms)"
    low = "–" if knee["ci95_low"] is None else f"{knee['ci95_low']:,.0f}"
    high = (
        f"past {knee['beyond_rps']:,.0f}"
        if knee["ci95_high"] is None
        else f"{knee['ci95_high']:,.0f}"
    )
    return f"{knee['rps']:,.0f} r/s [{low}–{high}] (p99 at the lowest rate {low_load} ms)"


def generator_lines(results: dict[str, Any]) -> list[str]:
    limits = results["generator"]
    first = limits["steps"][0]
    ceiling = limits["ceiling_rps"]
    if ceiling is None:
        held = "no rate it was tried at"
    else:
        held = f"{'at least ' if limits['ceiling_is_a_floor'] else ''}{ceiling:,} r/s"
    late, latency = first["lateness_ms"], first["latency_ms"]
    lines = [
        f"Load generator: holds {held} on a near-free endpoint (requests started within "
        f"{limits['late_limit_ms']:g} ms of their due time, answers keeping up). At "
        f"{first['rate']} r/s its requests started {format_number(late['p50'], 3)} ms late at "
        f"the median and {format_number(late['p99'], 3)} ms at p99; the whole path to a "
        f"near-free endpoint took {format_number(latency['p50'], 2)} ms at the median, "
        f"{format_number(latency['p99'], 2)} ms at p99 (the floor under every latency here)."
    ]
    lines.append(f"It ran under the {limits.get('priority', 'unknown')} scheduling policy.")
    failed = [step for step in limits["steps"] if not step["held"]]
    if failed:
        lines.append(f"At {failed[0]['rate']:,} r/s it fell short: {failed[0]['why_not']}.")
    return lines


def scenario_heading(scenario: dict[str, Any]) -> str:
    capacities = ", ".join(f"{arm} {rps:,.0f} r/s" for arm, rps in scenario["capacities"].items())
    beside = scenario.get("beside")
    asked = f"; {beside['label']} asked at {beside['rps']:g} r/s throughout" if beside else ""
    return f"{scenario['label']} (capacity, closed loop: {capacities}{asked})"


def heading(results: dict[str, Any]) -> str:
    settings = results["settings"]
    return (
        f"Latency at steady rates: {settings['rounds']} rounds of {settings['window_s']:g} s "
        f"windows per rate, {settings['arrivals']} arrivals"
    )


def machine_line(results: dict[str, Any]) -> str:
    host = results["host"]
    return (
        f"{results['started_at']} · {host['cpu_model']}, {host['cores']} cores · "
        f"{results['pinning']['note']} · {versions_sentence(results['versions'])}"
    )


def print_report(results: dict[str, Any], console: Console) -> None:
    console.print(f"\n{heading(results)}", highlight=False)
    for line in generator_lines(results):
        console.print(line, highlight=False)
    for scenario in results["scenarios"].values():
        for arm in results["settings"]["apps"]:
            print_table(
                console,
                ARM_HEADER,
                arm_rows(scenario, arm),
                title=f"{scenario_heading(scenario)}: {arm}",
            )
        header, rows = ratio_table(scenario)
        if len(header) > 1:
            print_table(console, header, rows, title=f"{scenario['label']}: over the baseline")
        header, rows = context_table(scenario)
        print_table(console, header, rows, title=f"{scenario['label']}: beside the tail")
        title = httperf_title(scenario)
        if title and "comparison" in scenario["httperf"]:
            print_table(
                console,
                HTTPERF_HEADER,
                httperf_rows(scenario["httperf"]),
                title=title,
                caption=HTTPERF_CAPTION,
            )
        elif title:
            console.print(title, highlight=False)
        for note in scenario.get("tail_notes", []):
            console.print(f"{scenario['label']}, {note}.", highlight=False)
        for arm, knee in scenario["knees"].items():
            console.print(f"{scenario['label']} knee, {arm}: {knee_text(knee)}", highlight=False)
    console.print(NOTE, highlight=False)
    print_flags(console, results["flags"])


def markdown(results: dict[str, Any]) -> str:
    lines = [f"# {heading(results)}", "", machine_line(results), ""]
    lines += [*generator_lines(results), ""]
    for scenario in results["scenarios"].values():
        lines += [f"## {scenario_heading(scenario)}", "", "![latency](latency.svg)", ""]
        for arm in results["settings"]["apps"]:
            lines += [f"### {arm}", "", markdown_table(ARM_HEADER, arm_rows(scenario, arm)), ""]
        header, rows = ratio_table(scenario)
        if len(header) > 1:
            lines += ["### Over the baseline", "", markdown_table(header, rows), ""]
        header, rows = context_table(scenario)
        lines += ["### Beside the tail", "", markdown_table(header, rows), ""]
        lines += [f"- {note}." for note in scenario.get("tail_notes", [])] + [""]
        title = httperf_title(scenario)
        if title and "comparison" in scenario["httperf"]:
            rows = httperf_rows(scenario["httperf"])
            lines += [f"### {title}", "", markdown_table(HTTPERF_HEADER, rows), ""]
            lines += [HTTPERF_CAPTION, ""]
        elif title:
            lines += [title, ""]
        lines += [
            f"- knee, {arm}: {knee_text(knee)}" for arm, knee in scenario["knees"].items()
        ] + [""]
    lines += [NOTE, ""]
    lines += [f"- ⚠ {flag}" for flag in results["flags"]] or ["No flags."]
    return "\n".join(lines) + "\n"


def draw_scenario(ax: Axes, results: dict[str, Any], scenario: dict[str, Any]) -> None:
    """p99 (solid, with its interval) and p50 (dashed) against the rate offered, per arm, on
    log scales; each arm's capacity as a dotted line; the generator's lateness p99 in grey."""
    for arm in results["settings"]["apps"]:
        points = [
            (rate["rps"], rate["arms"][arm])
            for rate in sorted(scenario["rates"].values(), key=lambda rate: rate["rps"])
            if arm in rate["arms"] and rate["arms"][arm]["p99"]["ms"] is not None
        ]
        if not points:
            continue
        rates = [rps for rps, _ in points]
        p99 = [found["p99"]["ms"] for _, found in points]
        low = [v - (f["p99"]["ci95_low"] or v) for v, (_, f) in zip(p99, points, strict=True)]
        high = [(f["p99"]["ci95_high"] or v) - v for v, (_, f) in zip(p99, points, strict=True)]
        ax.errorbar(
            rates,
            p99,
            yerr=[low, high],
            color=colour(arm),
            marker="o",
            capsize=3,
            label=f"{arm} p99",
        )
        ax.plot(
            rates,
            [found["p50"]["ms"] for _, found in points],
            color=colour(arm),
            linestyle="--",
            marker=".",
            label=f"{arm} p50",
        )
        capacity = scenario["capacities"].get(arm)
        if capacity:
            ax.axvline(capacity, color=colour(arm), linestyle=":", linewidth=1)
    late = [
        (rate["rps"], max(found["lateness_ms"]["p99"] or 0 for found in rate["arms"].values()))
        for rate in sorted(scenario["rates"].values(), key=lambda rate: rate["rps"])
    ]
    if late:
        ax.plot(
            [rps for rps, _ in late],
            [value for _, value in late],
            color="#888888",
            linewidth=1,
            label="generator started late, p99",
        )
    log_scale(ax, x=True, y=True)
    ax.set_xlabel("offered rate, requests/s (dotted: each arm's capacity)")
    ax.set_ylabel("latency from due time, ms")
    ax.set_title(scenario["label"])
    ax.grid(True, which="both", alpha=0.3)
    legend_outside(ax)


def latency_figure(results: dict[str, Any]) -> Figure:
    scenarios = list(results["scenarios"].values())
    chart, axes = plt.subplots(len(scenarios), 1, figsize=(8, 4.2 * len(scenarios)), squeeze=False)
    for ax, scenario in zip(axes[:, 0], scenarios, strict=True):
        draw_scenario(ax, results, scenario)
    chart.tight_layout()
    return chart


CHART_CAPTION = (
    "p99 (solid, with its 95% interval) and p50 (dashed) against the rate offered, log scales. "
    "Dotted vertical lines: each arm's capacity, measured closed-loop. Grey: how late the "
    "load generator started its requests (p99), which every figure includes."
)


def html(results: dict[str, Any], svg: str) -> str:
    body = [f'<p class="note">{escape(machine_line(results))}</p>']
    body += [f"<p>{escape(line)}</p>" for line in generator_lines(results)]
    body.append(figure(svg, CHART_CAPTION))
    for scenario in results["scenarios"].values():
        body.append(f"<h2>{escape(scenario_heading(scenario))}</h2>")
        for arm in results["settings"]["apps"]:
            body += [f"<h3>{escape(arm)}</h3>", html_table(ARM_HEADER, arm_rows(scenario, arm))]
        header, rows = ratio_table(scenario)
        if len(header) > 1:
            body += ["<h3>Over the baseline</h3>", html_table(header, rows)]
        header, rows = context_table(scenario)
        body += ["<h3>Beside the tail</h3>", html_table(header, rows)]
        notes = "".join(f"<li>{escape(note)}.</li>" for note in scenario.get("tail_notes", []))
        body.append(f"<ul>{notes}</ul>" if notes else "")
        title = httperf_title(scenario)
        if title and "comparison" in scenario["httperf"]:
            body += [
                f"<h3>{escape(title)}</h3>",
                html_table(HTTPERF_HEADER, httperf_rows(scenario["httperf"])),
                f'<p class="note">{escape(HTTPERF_CAPTION)}</p>',
            ]
        elif title:
            body.append(f"<p>{escape(title)}</p>")
        body.append(
            "<ul>"
            + "".join(
                f"<li>knee, {escape(arm)}: {escape(knee_text(knee))}</li>"
                for arm, knee in scenario["knees"].items()
            )
            + "</ul>"
        )
    body.append(flags_section(results["flags"], NOTE))
    return page(heading(results), "".join(body))


def write_reports(run_dir: Path, results: dict[str, Any]) -> list[Path]:
    svg = to_svg(latency_figure(results))
    return write_reports_into(run_dir, markdown(results), html(results, svg), {"latency.svg": svg})
