"""Every string a results.json holds, hostile (issue 53): a script, rich markup and matplotlib
mathematics appended to every label, command, path, flag and note, and to every arm's and
scenario's name wherever it appears. `report` draws the terminal report, report.md and
report.html from it as text: the page has no script of its own making, Chromium runs none (the
page's title stays the report's), and the terminal prints the strings as typed."""

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness_tests.browser import CHROMIUM, needs_chromium
from loadtest.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runs"
ATTACK = "<script>document.title='owned'</script>[/oops]$\\undefinedcmd{x}$"
# Strings the reader parses, not shows: a hostile one is a refusal in one line (its own test).
PARSED = {"schema_version", "kind", "started_at", "finished_at", "baseline"}
# Long hostile names crowd the charts: matplotlib says so, which is no failure here.
pytestmark = pytest.mark.filterwarnings("ignore:constrained_layout not applied")


def hostile(document: dict[str, Any]) -> dict[str, Any]:
    names = set(document["apps"]) | set(document["settings"]["scenarios"])

    def renamed(text: str) -> str:
        return text + ATTACK if text in names else text

    def walk(value: Any, key: str | None = None) -> Any:
        if isinstance(value, dict):
            return {renamed(k): walk(item, k) for k, item in value.items()}
        if isinstance(value, list):
            return [walk(item, key) for item in value]
        if isinstance(value, str):
            return renamed(value) if value in names else value if key in PARSED else value + ATTACK
        return value

    return walk(document)


@pytest.fixture(params=["benchmark", "compare"])
def hostile_run(
    request: pytest.FixtureRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, str]:
    document = json.loads((FIXTURES / request.param / "results.json").read_text())
    run_dir = tmp_path / request.param
    run_dir.mkdir()
    (run_dir / "results.json").write_text(json.dumps(hostile(document)))
    assert main(["report", str(run_dir)]) == 0, capsys.readouterr().err
    return run_dir, capsys.readouterr().out


def test_every_hostile_string_is_text_in_every_report(hostile_run: tuple[Path, str]) -> None:
    run_dir, terminal = hostile_run
    html = (run_dir / "report.html").read_text()
    assert "<script" not in html
    assert html.count("&lt;script&gt;document.title=&#x27;owned&#x27;&lt;/script&gt;") > 20
    assert "[/oops]$\\undefinedcmd{x}$" in terminal
    assert ATTACK in (run_dir / "report.md").read_text()


@needs_chromium
def test_chromium_runs_no_script_from_the_file(hostile_run: tuple[Path, str]) -> None:
    run_dir, _ = hostile_run
    assert CHROMIUM is not None
    dom = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={run_dir / 'profile'}",
            "--proxy-server=http://127.0.0.1:9",
            "--dump-dom",
            (run_dir / "report.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    [title] = re.findall(r"<title>(.*?)</title>", dom, flags=re.DOTALL)
    assert title != "owned" and title.endswith(" report"), title  # as written, not the script's
    assert "<svg" in dom  # the page is intact: its charts are there
