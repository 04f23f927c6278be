"""`./test.sh report DIR` on a results.json that is JSON of a known kind but not as the lab wrote
it (issue 53): one line naming the file and exit 1, never a traceback; labels that are markup or
mathematics to rich and matplotlib are printed and drawn as typed."""

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from loadtest.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runs"
COMPARE = json.loads((FIXTURES / "compare" / "results.json").read_text())


def run_with(tmp_path: Path, text: str) -> Path:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "results.json").write_text(text)
    return run_dir


def edited(change: Any) -> str:
    document = copy.deepcopy(COMPARE)
    change(document)
    return json.dumps(document)


def nested(depth: int) -> str:
    """A compare file whose windows hold a list nested `depth` deep."""
    return edited(lambda d: d.update(windows="[" * depth + "]" * depth)).replace(
        '"' + "[" * depth + "]" * depth + '"', "[" * depth + "]" * depth
    )


MALFORMED = {
    "nested past the parser": (nested(100_000), "nested too deeply"),
    "nested past the reports": (nested(5_000), "nested too deeply"),
    "elapsed_s a string": (
        edited(lambda d: d.update(elapsed_s="abc")),
        "holds a value the lab never writes",
    ),
    "a ratio of NaN": (
        edited(lambda d: d["ratios_vs_baseline"]["burn"]["slow"].update(estimate="NaN")).replace(
            '"estimate": "NaN"', '"estimate": NaN'
        ),
        "NaN is not a number a results file holds",
    ),
    "an infinite interval": (
        edited(lambda d: d["ratios_vs_baseline"]["burn"]["slow"].update(ci95_high="x")).replace(
            '"ci95_high": "x"', '"ci95_high": Infinity'
        ),
        "Infinity is not a number a results file holds",
    ),
    "the apps missing": (edited(lambda d: d.pop("apps")), "lacks 'apps'"),
    "the windows not a list": (
        edited(lambda d: d.update(windows=7)),
        "holds a value the lab never writes",
    ),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_results_file_is_one_line_and_exit_1(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, said = MALFORMED[case]
    run_dir = run_with(tmp_path, text)
    assert main(["report", str(run_dir)]) == 1
    error = capsys.readouterr().err
    assert error.startswith("./test.sh: error: ") and error.count("\n") == 1, error[-2000:]
    assert said in error and str(run_dir / "results.json") in error, error


def test_labels_that_are_markup_or_mathematics_are_shown_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: `[/oops]` stopped the terminal report (rich markup), `$\\undefinedcmd{x}$` the
    charts (matplotlib mathematics), and "$5 vs $10" was drawn as mathematics."""
    labels = {"burn": "[/oops] $\\undefinedcmd{x}$ $5 vs $10 [bold]"}
    document = copy.deepcopy(COMPARE)
    document["settings"]["scenario_labels"] = labels
    document["settings"]["services"]["slow"]["label"] = "[red]$\\frac{1}{0}$"
    run_dir = run_with(tmp_path, json.dumps(document))
    assert main(["report", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "[/oops]" in out and "[bold]" in out
    report = (run_dir / "report.md").read_text()
    assert labels["burn"] in report and "[red]$\\frac{1}{0}$" in report
    assert {path.name for path in run_dir.iterdir()} >= {"report.md", "report.html", "ratios.svg"}
