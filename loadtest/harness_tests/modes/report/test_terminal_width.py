"""Every mode's terminal report reads whole at 80 and 100 columns: no line runs past the
terminal, no cell is cut with "…", and every word of every table is printed whole (a table too
wide is printed as several, each with its row names)."""

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.table import Table

from loadtest.modes.registry import KINDS, mode_of_kind
from loadtest.output.results_file import read_results
from loadtest.output.text import column_groups

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runs"


@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize("kind", sorted(path.name for path in FIXTURES.iterdir()))
def test_every_report_fits_the_terminal_with_every_word_whole(
    kind: str, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    cells: list[str] = []
    add_row, add_column = Table.add_row, Table.add_column

    def recording_row(table: Table, *renderables: Any, **options: Any) -> None:
        cells.extend(str(renderable) for renderable in renderables)
        add_row(table, *renderables, **options)

    def recording_column(table: Table, header: Any = "", **options: Any) -> None:
        cells.append(str(header))
        add_column(table, header, **options)

    monkeypatch.setattr(Table, "add_row", recording_row)
    monkeypatch.setattr(Table, "add_column", recording_column)
    results = read_results(FIXTURES / kind, KINDS)
    console = Console(width=width, file=io.StringIO(), record=True)
    mode = mode_of_kind(results["kind"])
    assert mode is not None
    mode.report.print_report(results, console)
    text = console.export_text()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    words = {word for cell in cells for word in cell.split()}
    # A word longer than half the terminal (a function's path) may fold; no other may.
    cut = [word for word in words if len(word) < width // 2 and word not in text]
    assert cut == [], cut
    assert json.dumps(results)  # the fixture is whole


def test_columns_go_in_groups_that_fit_beside_the_row_names() -> None:
    # Row names 20 wide, figures 10: 20+4 for the first column, 13 for each of the others.
    assert column_groups([20, 10, 10, 10, 10], 80) == [[1, 2, 3, 4]]
    assert column_groups([20, 10, 10, 10, 10], 63) == [[1, 2, 3], [4]]
    assert column_groups([20, 10, 10, 10, 10], 62) == [[1, 2], [3, 4]]
    assert column_groups([20, 10, 10, 10, 10], 40) == [[1], [2], [3], [4]]
    assert column_groups([20, 70], 80) == [[1]]  # too wide even alone: a group of its own
