"""The arms side by side, in the terminal (rich) and in report.md, from results.json alone."""

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from loadtest.results import SATURATION_LIMIT
from loadtest.scenarios import SCENARIOS

FLAG_MARK = " ⚠"
VERSION_LIBRARIES = (
    "python", "fastapi", "starlette", "pydantic", "pydantic_compiled", "sqlalchemy", "psycopg",
)  # fmt: skip


def format_number(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def format_ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}x"


def format_ratio_with_ci(figures: dict[str, Any] | None) -> str:
    if not figures or figures["ratio"] is None:
        return "–"
    text = format_ratio(figures["ratio"])
    if figures["ci95_low"] is not None:
        text += f" [{figures['ci95_low']:.2f}–{figures['ci95_high']:.2f}]"
    return text + (FLAG_MARK if figures.get("flags") else "")


def format_spread(figures: dict[str, Any] | None, key: str, digits: int) -> str:
    """`median (min–max)` of a summarised figure, e.g. the start-up seconds."""
    if not figures or figures.get(key) is None:
        return "–"
    text = format_number(figures[key], digits)
    if figures[f"{key}_min"] != figures[f"{key}_max"]:
        text += (f" ({format_number(figures[f'{key}_min'], digits)}–"
                 f"{format_number(figures[f'{key}_max'], digits)})")  # fmt: skip
    return text


def arm_heading(results: dict[str, Any], arm: str, separator: str) -> str:
    """The arm's name with the two versions that tell the arms apart."""
    versions = results["apps"][arm]["versions"]
    if not versions:
        return arm
    return separator.join(
        [arm, f"Pydantic {versions['pydantic']}", f"FastAPI {versions['fastapi']}"]
    )


def title(results: dict[str, Any]) -> str:
    settings = results["settings"]
    arms = " vs ".join(results["apps"])
    repeats = settings["repeats"]
    return (
        f"{arms} — {settings['users']} users, {settings['pairs']} pairs of "
        f"{settings['window_s']:g}s windows × {repeats} repeat{'s' if repeats != 1 else ''}, "
        f"{settings['dataset_size']:,} posts"
    )


def table_rows(
    results: dict[str, Any], separator: str = " · "
) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one metric a row, one column an arm (ratios in the arms' columns)."""
    arms = list(results["apps"])
    baseline = results["settings"]["baseline"]
    header = ["metric", *(arm_heading(results, arm, separator) for arm in arms)]
    rows: list[list[str]] = []

    def scenario(arm: str, name: str) -> dict[str, Any]:
        return results["apps"][arm]["scenarios"][name]

    for name in results["settings"]["scenarios"]:
        label = SCENARIOS[name].label
        cells = []
        for arm in arms:
            figures = scenario(arm, name)
            text = format_number(figures["rps_median"])
            if figures["rps_min"] is not None and figures["windows"] > 1:
                text += (
                    f" ({format_number(figures['rps_min'])}–{format_number(figures['rps_max'])})"
                )
            cells.append(text + (FLAG_MARK if figures["flags"] else ""))
        rows.append([f"{label} r/s", *cells])
        if baseline:
            ratios = results["ratios_vs_baseline"].get(name, {})
            rows.append([
                f"{label} ratio to {baseline} [95% CI]",
                *("baseline" if arm == baseline else format_ratio_with_ci(ratios.get(arm))
                  for arm in arms),
            ])  # fmt: skip
            cross_check = (results.get("cross_check") or {}).get("ratios_vs_baseline", {})
            if name in cross_check:
                rows.append([
                    f"{label} ratio to {baseline}, wrk cross-check",
                    *("baseline" if arm == baseline
                      else format_ratio_with_ci(cross_check[name].get(arm)) for arm in arms),
                ])  # fmt: skip
        for key, figures in results.get("ratios_between_arms", {}).get(name, {}).items():
            arm, reference = key.split("/")
            rows.append([
                f"{label} {arm}/{reference} [95% CI]",
                *(format_ratio_with_ci(figures) if column == arm
                  else "reference" if column == reference else "" for column in arms),
            ])  # fmt: skip
        rows.append([
            f"{label} p50 / p95 / p99 ms",
            *(" / ".join(format_number(scenario(arm, name)[p], 0)
                         for p in ("p50_ms", "p95_ms", "p99_ms")) for arm in arms),
        ])  # fmt: skip
        with_database = any(
            scenario(arm, name)["db_cpu_ms_per_request"] is not None for arm in arms
        )
        rows.append([
            f"{label} CPU ms/request, app" + (" (PostgreSQL)" if with_database else ""),
            *(format_number(scenario(arm, name)["app_cpu_ms_per_request"], 2)
              + (f" ({format_number(scenario(arm, name)['db_cpu_ms_per_request'], 2)})"
                 if with_database else "")
              for arm in arms),
        ])  # fmt: skip
    startups = [results["apps"][arm].get("startup") for arm in arms]
    if any(startups):
        rows.append(
            [
                "start-up to first /health, s",
                *(format_spread(figures, "to_health_s", 2) for figures in startups),
            ]
        )
        rows.append(
            [
                "import of the app module, s",
                *(format_spread(figures, "import_s", 2) for figures in startups),
            ]
        )
    for moment in ("idle", "peak", "after"):
        cells = []
        for arm in arms:
            memory = results["apps"][arm]["memory"]
            cells.append(
                f"{format_number(memory[f'{moment}_rss_mib'])} "
                f"({format_number(memory[f'{moment}_uss_mib'])})"
            )
        rows.append([f"memory {moment}, RSS (USS) MiB", *cells])
    return header, rows


def load_generator_lines(results: dict[str, Any]) -> list[str]:
    """One story: how fast locust can go, and whether the app was the limit where it should be."""
    load = results["load_generator"]
    lines = []
    if load["calibration"]:
        lines.append(
            f"Load generator: locust drove {format_number(load['calibration']['rps'])} r/s "
            f"against a trivial endpoint, {format_ratio(load['headroom'])} the fastest window "
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


def print_table(results: dict[str, Any], console: Console) -> None:
    header, rows = table_rows(results, separator="\n")
    flags = results["flags"]
    table = Table(
        title=title(results),
        caption="r/s: median of windows (min–max). Ratio: median of paired window ratios, "
        "95% CI in brackets." + (" ⚠: see flags below." if flags else ""),
    )
    for index, column in enumerate(header):
        table.add_column(column, justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for line in load_generator_lines(results):
        console.print(line, highlight=False)
    for flag in flags:
        console.print(f"[bold yellow]⚠ {flag}[/]", highlight=False)
    if not flags:
        console.print(
            "No flags: no failures, no verification problems, every CI within ±5%, "
            "every synthetic window saturated."
        )


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write_report(run_dir: Path, results: dict[str, Any]) -> Path:
    header, rows = table_rows(results)
    settings, host = results["settings"], results["host"]
    arms = list(results["apps"])
    versions_rows = [
        [library, *(str(results["apps"][arm]["versions"].get(library, "–")) for arm in arms)]
        for library in VERSION_LIBRARIES
    ]
    flags = results["flags"] or ["none"]
    order = " / ".join(" ".join(arms) for arms in settings["arm_order"])
    text = f"""# {" vs ".join(arms)} — benchmark report

{title(results)}. Run {results["started_at"][:19]} → {results["finished_at"][:19]} UTC \
({results["elapsed_s"]:.0f}s).

{markdown_table(header, rows)}

READ is `GET /posts?per_page=100` (100 posts from PostgreSQL), READ synthetic
`GET /posts_synthetic?per_page=100` (100 posts built in memory), WRITE `POST /posts`.
Every arm was alive for the whole repeat, and they were loaded in turn (pinning:
{settings["pinning"]["note"]}): per scenario one locust run alternated the load between them
in {settings["window_s"]:g}s windows (the first {settings["settle_s"]:g}s of each not \
counted), {settings["pairs"]} rounds per repeat in rotating order. r/s is the median over an
arm's windows (min–max in brackets). A ratio is the median of the per-round ratios of
neighbouring windows, with its exact 95% confidence interval for the median (order
statistics). Latency percentiles are over every counted request; CPU per request is the app's
process tree (and the embedded PostgreSQL's) during its windows, median over windows; memory
is the app's process tree (RSS, with USS in brackets), median over repeats: idle after
start-up, peak under load, after load. Start-up is median (min–max) over fresh starts of each
arm, in turn, from launch to the first 200 on `/health`; the import is `import <app module>`
inside those starts (it builds the app and opens its first database connection). A ⚠ marks a
flagged cell.

{chr(10).join(load_generator_lines(results))}

## Flags

{chr(10).join(f"- {flag}" for flag in flags)}

## Settings

| setting | value |
|---|---|
| users | {settings["users"]} |
| windows | {settings["window_s"]:g}s, the first {settings["settle_s"]:g}s not counted |
| pairs (rounds) per scenario and repeat | {settings["pairs"]} |
| warm-up | {settings["warmup_s"]:g}s per arm before each scenario, discarded |
| repeats | {settings["repeats"]} (fresh processes), arm order {order} |
| dataset | {settings["dataset_size"]:,} posts, reset before every repeat |
| uvicorn workers | {settings["workers"]} |
| locust processes | {settings["load_processes"]} |
| scenarios | {", ".join(settings["scenarios"])} |
| pinning | {settings["pinning"]["note"]} |
| database | PostgreSQL {settings["database"]["server_version"]} ({settings["database"]["kind"]}) |

## Versions

{markdown_table(["library", *arms], versions_rows)}

## Host

{host["cpu_model"]}, {host["cores"]} cores ({host["cores_available"]} available), \
{host["memory_gib"]} GiB, {host["os"]}, Python {host["python"]}.
"""
    path = run_dir / "report.md"
    path.write_text(text)
    return path
