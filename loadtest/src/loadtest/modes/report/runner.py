"""Rebuild a run's reports from its results.json (any mode's), or compare two benchmark runs
side by side (e.g. before and after an upgrade)."""

from pathlib import Path
from typing import Any

from rich.console import Console

from loadtest.lab.errors import LabError
from loadtest.lab.files import write_text_safely
from loadtest.modes.registry import KINDS, mode_of_kind
from loadtest.output.results_file import read_results, reporting_from
from loadtest.output.text import print_table


def read_run(run_dir: Path) -> dict[str, Any]:
    """A run's results.json, of any mode's kind (the registry's), upgraded if it is old."""
    return read_results(run_dir, KINDS)


def rebuild(run_dir: Path, console: Console) -> Path:
    results = read_run(run_dir)
    mode = mode_of_kind(results["kind"])
    assert mode is not None  # read_results knows only the registry's kinds
    with reporting_from(run_dir / "results.json"):
        written = mode.report.write_reports(run_dir, results)
        mode.report.print_report(results, console)
    if "upgraded_from" in results:
        console.print(
            f"(results.json is schema_version {results['upgraded_from']}: read as version "
            f"{results['schema_version']}; the file itself is unchanged)",
            highlight=False,
        )
    console.print(f"\nWrote {' and '.join(str(path) for path in written)}", highlight=False)
    return written[-1]


def run_name(run_dir: Path) -> str:
    """The run's timestamp folder, also when given as results/latest."""
    return run_dir.resolve().name


def compare(run_dirs: tuple[Path, ...], results_dir: Path, console: Console) -> Path:
    from loadtest.pipeline.html import comparison_page
    from loadtest.pipeline.tables import comparison_rows

    if run_dirs[0].resolve() == run_dirs[1].resolve():
        raise LabError("both arguments are the same run; give two different runs")
    runs = [(run_name(run_dir), read_run(run_dir)) for run_dir in run_dirs]
    for (_, results), run_dir in zip(runs, run_dirs, strict=True):
        if results["kind"] != "benchmark":
            raise LabError(
                f"{run_dir} is a {results['kind']} run: two runs are compared for benchmark "
                f"runs only (./test.sh report {run_dir} rebuilds its report)"
            )
    with reporting_from(" or ".join(str(run_dir / "results.json") for run_dir in run_dirs)):
        header, rows = comparison_rows(runs)
        page = comparison_page(runs)
    print_table(
        console,
        header,
        rows,
        title=f"{runs[0][0]} vs {runs[1][0]}",
        caption="⚠: the ratio is flagged in its run (./test.sh report RUN_DIR lists the flags).",
    )
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"compare-{runs[0][0]}-vs-{runs[1][0]}.html"
    write_text_safely(path, page)
    console.print(f"\nWrote {path}", highlight=False)
    return path
