"""The profile's tables, in the terminal and in report.md, from results.json alone."""

from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.lab.files import write_text_safely
from loadtest.load.scenarios import SCENARIOS
from loadtest.modes.profile.buckets import BUCKETS
from loadtest.modes.profile.settings import PROFILED_SCENARIOS
from loadtest.output.text import markdown_table, print_table, pydantic_heading


def cells(entry: dict[str, Any] | None, bucket: str) -> list[str]:
    if entry is None or bucket not in entry["buckets"]:
        return ["–", "–"]
    figures = entry["buckets"][bucket]
    return [f"{figures['us_per_request']:,.0f}", f"{figures['share']:.1%}"]


def scenario_rows(results: dict[str, Any], scenario: str) -> tuple[list[str], list[list[str]]]:
    apps = results["settings"]["apps"]
    entries = results["profile"][scenario]
    header = ["µs per request", *(f"{app} {column}" for app in apps for column in ("µs", "share"))]
    present = [b for b in BUCKETS if any(b in entries[app]["buckets"] for app in apps)]
    rows = [[BUCKETS[b], *(c for app in apps for c in cells(entries[app], b))] for b in present]
    for label, key, share in (
        ("total under the profiler", "total_us_per_request", "100%"),
        ("the same requests without it", "unprofiled_us_per_request", ""),
        ("function calls seen per request", "calls_per_request", ""),
    ):
        rows.append(
            [label, *(cell for app in apps for cell in (f"{entries[app][key]:,.0f}", share))]
        )
    return header, rows


def top_rows(results: dict[str, Any], scenario: str) -> list[list[str]]:
    return [
        [
            app,
            function["function"],
            f"{function['us_per_request']:,.0f}",
            f"{function['calls_per_request']:,.0f}",
            BUCKETS.get(function["bucket"], "a helper: counted for its callers"),
        ]
        for app, entry in results["profile"][scenario].items()
        for function in entry["top_functions"]
    ]


def scenario_title(results: dict[str, Any], scenario: str) -> str:
    versions = results["versions"]
    arms = " vs ".join(
        f"{app} ({pydantic_heading(versions[app])}, FastAPI {versions[app]['fastapi']})"
        for app in results["settings"]["apps"]
    )
    return (
        f"{SCENARIOS[scenario].label} (GET {SCENARIOS[scenario].path}) under cProfile — {arms}, "
        f"{results['settings']['requests']:,} requests each"
    )


def write_reports(run_dir: Path, results: dict[str, Any]) -> list[Path]:
    path = run_dir / "report.md"
    write_text_safely(path, report_markdown(results))
    return [path]


def print_report(results: dict[str, Any], console: Console) -> None:
    for scenario in PROFILED_SCENARIOS:
        header, rows = scenario_rows(results, scenario)
        print_table(console, header, rows, title=scenario_title(results, scenario))
        print_table(
            console,
            ("app", "function", "µs/request", "calls/request", "bucket"),
            top_rows(results, scenario),
            title=f"{SCENARIOS[scenario].label}: the functions with the most own time",
        )
    for note in results["notes"]:
        console.print(f"Note: {note}", highlight=False)


def how_to_open(run_dir: Path) -> str:
    example = min(run_dir.glob("*.prof"), default=run_dir / "APP-SCENARIO.prof")
    return (
        f"The .prof files are in {run_dir}: open one with `python3 -m pstats {example}` "
        "(then `sort tottime`, `stats 20`), or draw it with snakeviz, which the lab does not "
        f"install (`.tools/uv/bin/uvx snakeviz -s {example}` fetches it from PyPI)."
    )


def report_markdown(results: dict[str, Any]) -> str:
    parts = [
        "# Where a request's time goes — cProfile, per request\n",
        f"Run {results['started_at'][:19]} → {results['finished_at'][:19]} UTC; "
        f"per app and scenario, {results['settings']['warmup_requests']} warm-up requests, "
        f"then {results['settings']['requests']:,} timed without the profiler and as many "
        "profiled; dataset "
        f"{results['settings']['dataset_size']:,} posts; pinning: "
        f"{results['settings']['pinning']['note']}.\n",
    ]
    for scenario in PROFILED_SCENARIOS:
        header, rows = scenario_rows(results, scenario)
        parts.append(f"## {scenario_title(results, scenario)}\n")
        parts.append(markdown_table(header, rows) + "\n")
        parts.append("The functions with the most own time:\n")
        parts.append(
            markdown_table(
                ["app", "function", "µs/request", "calls/request", "bucket"],
                top_rows(results, scenario),
            )
            + "\n"
        )
    parts.append("## Notes\n")
    parts += [f"- {note}" for note in results["notes"]]
    files = ", ".join(
        f"`{entry['prof_file']}`"
        for scenario in results["profile"].values()
        for entry in scenario.values()
    )
    parts.append(
        f"\nThe profiles: {files}. Open one with `python3 -m pstats FILE` (then `sort tottime`, "
        "`stats 20`), or with snakeviz (`.tools/uv/bin/uvx snakeviz -s FILE`).\n"
    )
    return "\n".join(parts)
