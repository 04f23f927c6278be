"""The benchmark's table and its lines of text, the same in the terminal, report.md and
report.html, from results.json alone."""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from loadtest.analysis.clusters import CLUSTER_METHOD, POOLED_METHOD
from loadtest.analysis.limits import CI_HALF_WIDTH_LIMIT, SATURATION_LIMIT, within_text
from loadtest.load.scenarios import SCENARIOS
from loadtest.output.text import (
    FLAG_MARK,
    format_factor,
    format_number,
    format_ratio,
    format_spread,
    pydantic_heading,
)


@dataclass(frozen=True)
class Comparison:
    """One ratio a benchmark run reports in every scenario: an arm over the baseline, or over
    the arm it is also compared with."""

    arm: str
    reference: str
    over_baseline: bool

    @property
    def label(self) -> str:
        return f"{self.arm}/{self.reference}"

    def figures(self, results: dict[str, Any], scenario: str) -> dict[str, Any] | None:
        """The ratio's figures in one scenario (None where the run lacks it)."""
        if self.over_baseline:
            return results["ratios_vs_baseline"].get(scenario, {}).get(self.arm)
        return results.get("ratios_between_arms", {}).get(scenario, {}).get(self.label)


def scenario_label(results: dict[str, Any], name: str) -> str:
    """A scenario's label, as the run recorded it (older runs: the lab's own)."""
    recorded = results["settings"].get("scenario_labels", {}).get(name)
    return recorded or (SCENARIOS[name].label if name in SCENARIOS else name)


def memory_measure(results: dict[str, Any]) -> str:
    """What the memory figures are: the RSS of the app's process tree (with its USS), locally
    and, where the harness could read the containers' processes, with --docker; else the
    container's usage as `docker stats` reports it (no USS there; runs before the harness
    read containers' processes recorded no source)."""
    settings = results["settings"]
    source = settings.get("memory_source", "docker stats")
    if settings.get("docker") and source == "docker stats":
        return "container (docker stats)"
    if settings.get("docker") and source == "mixed":
        return "RSS or container (docker stats)"  # no USS: not every figure has one
    return "RSS"


def comparisons(results: dict[str, Any]) -> list[Comparison]:
    """Every ratio the run has: each arm over the baseline, then the other comparisons."""
    baseline = results["settings"]["baseline"]
    found = [
        Comparison(arm, baseline, over_baseline=True)
        for arm in results["apps"]
        if baseline and arm != baseline
    ]
    keys = {key for ratios in results.get("ratios_between_arms", {}).values() for key in ratios}
    for key in sorted(keys):
        arm, reference = key.split("/")
        found.append(Comparison(arm, reference, over_baseline=False))
    return found


# How a ratio was reached, by its `method` in results.json: a few words for a table's caption,
# and the sentence of report.md's paragraph.
RATIO_METHOD_WORDS = {
    POOLED_METHOD: (
        "median of paired window ratios",
        # As report.md has always worded it, line breaks and all: an old run's rebuilt report
        # is the same file.
        "the median of the per-round ratios of\nneighbouring windows, with its exact 95% "
        "confidence interval for the median (order\nstatistics)",
    ),
    CLUSTER_METHOD: (
        "over repeats, the geometric mean of each repeat's median paired window ratio",
        "over repeats: each repeat's median of the per-round ratios of neighbouring windows, "
        "their geometric mean, and a 95% interval of Student's t over the repeats, which covers "
        "what a rerun would vary",
    ),
}


def ratio_methods(results: dict[str, Any]) -> list[str]:
    """The methods the run's ratios used, the pooled one first (a ratio that lacked pairs in
    some repeats keeps it); a results file from before `method` was written: the pooled one."""
    groups = [results["ratios_vs_baseline"], results.get("ratios_between_arms", {})]
    found = {
        figures.get("method", POOLED_METHOD)
        for group in groups
        for by_arm in group.values()
        for figures in by_arm.values()
    }
    return [method for method in RATIO_METHOD_WORDS if method in found] or [POOLED_METHOD]


def ratio_caption(results: dict[str, Any]) -> str:
    """'Ratio: ...' for under a table."""
    words = " or ".join(RATIO_METHOD_WORDS[method][0] for method in ratio_methods(results))
    return f"Ratio: {words}, 95% CI in brackets."


def ratio_sentence(results: dict[str, Any]) -> str:
    """'A ratio is ...' for a report's account of how it measured."""
    methods = ratio_methods(results)
    which = " (each ratio's `method` in results.json says which)" if len(methods) > 1 else ""
    return f"A ratio is {'; or '.join(RATIO_METHOD_WORDS[m][1] for m in methods)}{which}."


VERSION_LIBRARIES = (
    "python",
    "fastapi",
    "starlette",
    "pydantic",
    "pydantic_v1",
    "pydantic_compiled",
    "sqlalchemy",
    "psycopg",
)


def arm_heading(results: dict[str, Any], arm: str, separator: str) -> str:
    """The arm's name with the two versions that tell the arms apart."""
    versions = results["apps"][arm]["versions"]
    if not versions.get("fastapi") or not versions.get("pydantic"):
        return arm  # a service that does not report the lab's versions on its health path
    return separator.join([arm, pydantic_heading(versions), f"FastAPI {versions['fastapi']}"])


def title(results: dict[str, Any]) -> str:
    """The arms and the timetable: one for the run, or (compare) each scenario's fitted one,
    with the repeats the run ended with."""
    settings = results["settings"]
    arms = " vs ".join(results["apps"])
    repeats = (results.get("stopping") or {}).get("repeats") or settings["repeats"]
    posts = f", {settings['dataset_size']:,} posts" if settings.get("dataset_size") else ""
    plural = "s" if repeats != 1 else ""
    fitted = results.get("timetable") or {}
    if fitted:
        timetables = ", ".join(
            f"{scenario_label(results, name)} {timetable['users']} users × "
            f"{timetable['window_s']:g}s"
            for name, timetable in fitted.items()
        )
        return (
            f"{arms} — {timetables} windows, {settings['pairs']} pairs × {repeats} "
            f"repeat{plural}{posts}"
        )
    return (
        f"{arms} — {settings['users']} users, {settings['pairs']} pairs of "
        f"{settings['window_s']:g}s windows × {repeats} repeat{plural}"
        f"{posts}"
    )


def fitted_windows_text(results: dict[str, Any]) -> str | None:
    """Each scenario's fitted timetable in words (compare; the benchmark's --fit), or None
    where every scenario ran with the settings' one."""
    fitted = results.get("timetable") or {}
    if not fitted:
        return None
    return "; ".join(
        f"{scenario_label(results, name)} {timetable['window_s']:g}s windows (the first "
        f"{timetable['settle_s']:g}s not counted) with {timetable['users']} users"
        for name, timetable in fitted.items()
    )


def timetable_rows(results: dict[str, Any]) -> list[list[str]]:
    """The settings tables' users and windows: the run's, or each scenario's fitted ones."""
    settings = results["settings"]
    fitted = results.get("timetable") or {}
    if not fitted:
        return [
            ["users", str(settings["users"])],
            [
                "windows",
                f"{settings['window_s']:g}s, the first {settings['settle_s']:g}s not counted",
            ],
        ]
    labels = {name: scenario_label(results, name) for name in fitted}
    return [
        [
            "users per scenario",
            ", ".join(f"{labels[name]} {timetable['users']}" for name, timetable in fitted.items()),
        ],
        [
            "windows per scenario",
            "; ".join(
                f"{labels[name]} {timetable['window_s']:g}s, the first "
                f"{timetable['settle_s']:g}s not counted"
                for name, timetable in fitted.items()
            ),
        ],
    ]


def timetable_why_lines(results: dict[str, Any]) -> list[str]:
    """How each fitted timetable was chosen, a line per scenario (none where nothing was
    fitted)."""
    return [
        f"{scenario_label(results, name)}: " + "; ".join(timetable["why"])
        for name, timetable in (results.get("timetable") or {}).items()
    ]


def health_path(results: dict[str, Any]) -> str:
    """Where start-up was timed to: the lab's /health, or (compare) the services' own health
    path, named where they share one."""
    services = results["settings"].get("services") or {}
    if not services:
        return "/health"
    # The arms whose start-up was timed: those the harness started (not one reached by URL).
    paths = {
        service.get("health") for service in services.values() if service.get("started_here", True)
    }
    return paths.pop() or "health path" if len(paths) == 1 else "health path"


def table_rows(
    results: dict[str, Any], separator: str = " · "
) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one metric a row, one column an arm (ratios in the arms' columns)."""
    arms = list(results["apps"])
    header = ["metric", *(arm_heading(results, arm, separator) for arm in arms)]
    rows: list[list[str]] = []
    for name in results["settings"]["scenarios"]:
        rows += scenario_rows(results, name, arms)
    return header, rows + startup_rows(results, arms) + memory_rows(results, arms)


def scenario_rows(results: dict[str, Any], name: str, arms: list[str]) -> list[list[str]]:
    """A scenario's rows: r/s, its ratios (to the baseline, of CPU, wrk's, between arms),
    latency percentiles, CPU per request and, where the arms counted them, SQL statements per
    request."""
    baseline = results["settings"]["baseline"]
    label = scenario_label(results, name)
    figures_of = {arm: results["apps"][arm]["scenarios"][name] for arm in arms}
    cells = []
    for arm in arms:
        figures = figures_of[arm]
        text = format_number(figures["rps_median"])
        if figures["rps_min"] is not None and figures["windows"] > 1:
            text += f" ({format_number(figures['rps_min'])}–{format_number(figures['rps_max'])})"
        cells.append(text + (FLAG_MARK if figures["flags"] else ""))
    rows = [[f"{label} r/s", *cells]]
    if baseline:
        rows += baseline_rows(results, name, arms, label, baseline)
    for key, figures in results.get("ratios_between_arms", {}).get(name, {}).items():
        arm, reference = key.split("/")
        rows.append(
            [
                f"{label} {arm}/{reference} [95% CI]",
                *(
                    format_ratio(figures)
                    if column == arm
                    else "reference"
                    if column == reference
                    else ""
                    for column in arms
                ),
            ]
        )
    rows.append(
        [
            f"{label} p50 / p95 / p99 ms",
            *(
                " / ".join(
                    format_number(figures_of[arm][p], 0) for p in ("p50_ms", "p95_ms", "p99_ms")
                )
                for arm in arms
            ),
        ]
    )
    with_database = any(figures_of[arm]["db_cpu_ms_per_request"] is not None for arm in arms)
    rows.append(
        [
            f"{label} CPU ms/request, app" + (" (PostgreSQL)" if with_database else ""),
            *(
                format_number(figures_of[arm]["app_cpu_ms_per_request"], 2)
                + (
                    f" ({format_number(figures_of[arm]['db_cpu_ms_per_request'], 2)})"
                    if with_database
                    else ""
                )
                for arm in arms
            ),
        ]
    )
    statements = [figures_of[arm].get("statements_per_request") for arm in arms]
    if any(count is not None for count in statements):  # counted at the arms' engines
        rows.append([f"{label} SQL statements/request", *(format_number(n, 1) for n in statements)])
    return rows


def baseline_rows(
    results: dict[str, Any], name: str, arms: list[str], label: str, baseline: str
) -> list[list[str]]:
    """A scenario's ratios to the baseline: of throughput, of app CPU per request (where
    measured) and wrk's (where it cross-checked)."""
    ratios = results["ratios_vs_baseline"].get(name, {})
    rows = [
        [
            f"{label} ratio to {baseline} [95% CI]",
            *("baseline" if arm == baseline else format_ratio(ratios.get(arm)) for arm in arms),
        ]
    ]
    if any(figures.get("cpu_per_request") for figures in ratios.values()):
        rows.append(
            [
                f"{label} app CPU per request to {baseline} [95% CI]",
                *(
                    "baseline"
                    if arm == baseline
                    else format_ratio((ratios.get(arm) or {}).get("cpu_per_request"), mark=False)
                    for arm in arms
                ),
            ]
        )
    cross_check = (results.get("cross_check") or {}).get("ratios_vs_baseline", {})
    if name in cross_check:
        rows.append(
            [
                f"{label} ratio to {baseline}, wrk cross-check",
                *(
                    "baseline" if arm == baseline else format_ratio(cross_check[name].get(arm))
                    for arm in arms
                ),
            ]
        )
    return rows


def startup_rows(results: dict[str, Any], arms: list[str]) -> list[list[str]]:
    startups = [results["apps"][arm].get("startup") for arm in arms]
    if not any(startups):
        return []
    rows = [
        [
            f"start-up to first {health_path(results)}, s",
            *(format_spread(figures, "to_health_s", 2) for figures in startups),
        ]
    ]
    if any(figures and figures.get("import_s") is not None for figures in startups):
        rows.append(
            [
                "import of the app module, s",
                *(format_spread(figures, "import_s", 2) for figures in startups),
            ]
        )
    return rows


def memory_rows(results: dict[str, Any], arms: list[str]) -> list[list[str]]:
    with_uss = memory_measure(results) == "RSS"  # no USS in docker stats' figure
    label = memory_measure(results) + (" (USS)" if with_uss else "")
    rows = []
    for moment in ("idle", "peak", "after"):
        cells = []
        for arm in arms:
            memory = results["apps"][arm]["memory"]
            cell = format_number(memory[f"{moment}_rss_mib"])
            if with_uss:
                cell += f" ({format_number(memory[f'{moment}_uss_mib'])})"
            cells.append(cell)
        rows.append([f"memory {moment}, {label} MiB", *cells])
    return rows


def load_generator_lines(results: dict[str, Any]) -> list[str]:
    """One story: how fast locust can go, and whether the app was the limit where it should be."""
    load = results["load_generator"]
    lines = []
    if load["calibration"]:
        lines.append(
            f"Load generator: locust drove {format_number(load['calibration']['rps'])} r/s "
            f"against a trivial endpoint, {format_factor(load['headroom'])} the fastest window "
            f"({format_number(load['fastest_window_rps'])} r/s)."
        )
    else:
        lines.append("Load generator: not calibrated (--no-calibration).")
    low, high = load["synthetic_app_cpu_busy_min"], load["synthetic_app_cpu_busy_max"]
    if low is not None:
        verdict = (
            "the app was the limit in every window"
            if low >= SATURATION_LIMIT
            else f"under {SATURATION_LIMIT:.0%} in some windows, so something else limited "
            "those (flagged below)"
        )
        lines.append(
            f"READ synthetic: the app kept {low:.0%}–{high:.0%} of its CPU busy; {verdict}."
        )
    return lines


def summary_lines(results: dict[str, Any]) -> list[str]:
    """The answer in three plain lines: throughput ratios with their intervals, start-up and
    memory, each arm beside the baseline."""
    arms = list(results["apps"])
    baseline = results["settings"]["baseline"]
    scenarios = results["settings"]["scenarios"]
    lines = []
    if baseline:
        per_arm = []
        for arm in arms:
            if arm == baseline:
                continue
            ratios = ", ".join(
                f"{scenario_label(results, name)} {format_ratio(figures, mark=False)}"
                for name in scenarios
                if (figures := results["ratios_vs_baseline"].get(name, {}).get(arm))
            )
            per_arm.append(f"{arm}: {ratios}")
        lines.append(
            f"Throughput over {baseline} (paired ratio, 95% CI): " + "; ".join(per_arm) + "."
        )
    else:
        lines.append(f"Throughput: only {', '.join(arms)} ran, so there are no ratios.")

    def versus(value: float | None, reference: float | None, unit: str, digits: int) -> str:
        if value is None:
            return "–"
        text = f"{value:,.{digits}f} {unit}"
        if reference is not None and baseline:
            text += f" ({value - reference:+,.{digits}f})"
        return text

    startups = {arm: (results["apps"][arm].get("startup") or {}).get("to_health_s") for arm in arms}
    if any(value is not None for value in startups.values()):
        reference = startups.get(baseline) if baseline else None
        lines.append(
            f"Start-up to the first {health_path(results)} (median): "
            + ", ".join(
                f"{arm} {versus(value, reference if arm != baseline else None, 's', 2)}"
                for arm, value in startups.items()
            )
            + "."
        )
    else:
        lines.append("Start-up: not measured in this run (--startup-samples 0, or --docker).")
    memory = {arm: results["apps"][arm]["memory"] for arm in arms}
    idle_reference = memory[baseline]["idle_rss_mib"] if baseline else None
    peak_reference = memory[baseline]["peak_rss_mib"] if baseline else None
    lines.append(
        f"Memory, {memory_measure(results)} idle / peak under load: "
        + ", ".join(
            f"{arm} "
            + versus(figures["idle_rss_mib"], idle_reference if arm != baseline else None, "MiB", 1)
            + " / "
            + versus(figures["peak_rss_mib"], peak_reference if arm != baseline else None, "MiB", 1)
            for arm, figures in memory.items()
        )
        + "."
    )
    return lines


def interval_limit_text(results: dict[str, Any]) -> str:
    """The widest interval the run left unflagged: ±5%, or compare's --precision."""
    precision = results["settings"].get("precision") or CI_HALF_WIDTH_LIMIT
    return within_text(precision)


def flags_line(results: dict[str, Any]) -> str:
    """One line on the flags: how many, and whether the run can be trusted as it stands."""
    flags = results["flags"]
    interval_flags = [flag for flag in results.get("interval_flags", []) if flag in flags]
    about_the_run = len(flags) - len(interval_flags)
    if not flags:
        # The saturation check is READ synthetic's: a compare file may have no such scenario.
        saturated = (
            ", every synthetic window saturated"
            if "synthetic" in results["settings"]["scenarios"]
            else ""
        )
        return (
            f"No flags: no failures, no verification problems, every 95% CI within "
            f"{interval_limit_text(results)}{saturated}. The run is trustworthy as it stands."
        )
    count = f"{len(flags)} flag{'s' if len(flags) != 1 else ''}"
    if about_the_run == 0:
        return (
            f"{count}, all about the width of intervals: the figures stand, less precisely than "
            f"{interval_limit_text(results)} (the flags, below, say where)."
        )
    return (
        f"{count}, {about_the_run} about the run itself (failures, verification, other programs "
        "or arms on the app's CPU, the load generator): read them, below, before trusting the "
        "numbers."
    )


def comparison_rows(runs: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[list[str]]]:
    """Two runs side by side (./test.sh report A B): per scenario each run's ratios [CI], then
    per arm its start-up, memory and versions."""
    header = ["metric", *(name for name, _ in runs)]
    rows = []
    # Everything either run has: comparing an old two-arm run with a new three-arm one keeps
    # the new arm's rows (with "–" for the run that lacks them).
    scenarios = union(results["settings"]["scenarios"] for _, results in runs)
    ratios_by_run = [
        {comparison.label: comparison for comparison in comparisons(results)} for _, results in runs
    ]
    labels = union(ratios_by_run)
    arms = union(results["apps"] for _, results in runs)
    for name in scenarios:
        for label in labels:
            cells = []
            for (_, results), ratios in zip(runs, ratios_by_run, strict=True):
                comparison = ratios.get(label)
                in_run = name in results["settings"]["scenarios"]
                cells.append(
                    format_ratio(comparison.figures(results, name))
                    if comparison and in_run
                    else "–"
                )
            rows.append([f"{scenario_label(runs[-1][1], name)} {label} [95% CI]", *cells])
    for arm in arms:
        cells = [
            format_spread((results["apps"].get(arm) or {}).get("startup"), "to_health_s", 2)
            for _, results in runs
        ]
        path = health_path(runs[-1][1])
        rows.append([f"{arm} start-up to first {path}, s", *cells])
    for arm in arms:
        cells = []
        for _, results in runs:
            memory = (results["apps"].get(arm) or {}).get("memory")
            cells.append(
                f"{format_number(memory['idle_rss_mib'])} / {format_number(memory['peak_rss_mib'])}"
                if memory
                else "–"
            )
        rows.append([f"{arm} memory idle / peak, RSS MiB", *cells])
    for arm in arms:
        cells = [
            str((results["apps"].get(arm) or {}).get("versions", {}).get("fastapi", "–"))
            + " / "
            + str((results["apps"].get(arm) or {}).get("versions", {}).get("pydantic", "–"))
            for _, results in runs
        ]
        rows.append([f"{arm} FastAPI / Pydantic", *cells])
    return header, rows


def union(groups: Iterable[Iterable[str]]) -> list[str]:
    """Every name in any group, in the order first seen."""
    return list(dict.fromkeys(name for group in groups for name in group))
