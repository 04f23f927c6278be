"""`./test.sh report RUN_DIR [RUN_DIR]`: rebuild a run's reports from its results.json, or
compare two runs side by side (e.g. before and after an upgrade)."""

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from loadtest.html_report import comparison_page, comparison_rows, write_html_report
from loadtest.processes import BenchmarkError
from loadtest.report import print_table, write_report
from loadtest.settings import WHERE_TIME_GOES_MODES

READABLE_SCHEMAS = (2, 3)  # 2: before start-up and the third arm; read with what it has


def load_results(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "results.json"
    if not path.is_file():
        raise BenchmarkError(f"{run_dir} holds no results.json (is it a run directory?)")
    try:
        results = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise BenchmarkError(f"cannot read {path}: {error}".splitlines()[0]) from None
    kind = results.get("kind") if isinstance(results, dict) else None
    if kind in WHERE_TIME_GOES_MODES:
        raise BenchmarkError(f"{run_dir} is a {kind} run, whose report.md was written with it; "
                             "the report mode rebuilds benchmark runs only")  # fmt: skip
    version = results.get("schema_version") if isinstance(results, dict) else None
    if version not in READABLE_SCHEMAS:
        raise BenchmarkError(f"{path} has schema_version {version!r}; this version reads "
                             f"{' and '.join(map(str, READABLE_SCHEMAS))}")  # fmt: skip
    return results


def run_name(run_dir: Path) -> str:
    """The run's timestamp folder, also when given as results/latest."""
    return run_dir.resolve().name


def rebuild_reports(run_dirs: list[Path], results_dir: Path, console: Console) -> Path:
    try:
        return build_reports(run_dirs, results_dir, console)
    except (KeyError, TypeError, AttributeError, IndexError) as error:
        # A results.json of a readable version whose content does not match it.
        raise BenchmarkError(f"a results.json lacks or mangles a field the report needs "
                             f"({type(error).__name__}: {error})") from None  # fmt: skip
    except OSError as error:
        raise BenchmarkError(f"cannot write the report: {error}".splitlines()[0]) from None


def build_reports(run_dirs: list[Path], results_dir: Path, console: Console) -> Path:
    if len(run_dirs) == 1:
        [run_dir] = run_dirs
        results = load_results(run_dir)
        write_report(run_dir, results)
        html = write_html_report(run_dir, results)
        print_table(results, console)
        console.print(f"\nWrote {run_dir}/report.md and {html.name}", highlight=False)
        return html
    if run_dirs[0].resolve() == run_dirs[1].resolve():
        raise BenchmarkError("both arguments are the same run; give two different runs")
    runs = [(run_name(run_dir), load_results(run_dir)) for run_dir in run_dirs]
    header, rows = comparison_rows(runs)
    table = Table(title=f"{runs[0][0]} vs {runs[1][0]}")
    for index, column in enumerate(header):
        table.add_column(column, justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"compare-{runs[0][0]}-vs-{runs[1][0]}.html"
    path.write_text(comparison_page(runs))
    console.print(f"\nWrote {path}", highlight=False)
    return path
