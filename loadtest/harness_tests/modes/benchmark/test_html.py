"""report.html: self-contained charts from results.json; `./test.sh report`; and the page
rendered in a real browser (Debian's Chromium, .ci/run installs it) with the network off."""

import json
import re
from pathlib import Path

import pytest

from harness_tests.browser import needs_chromium, pixels_of_arm, screenshot_pixels
from harness_tests.factories import build, make_run, steady_runs, three_arm_rounds
from harness_tests.runner import run_in_process
from loadtest.lab.startup import StartupSamples
from loadtest.pipeline.html import write_html_report
from loadtest.pipeline.settings import BenchmarkSettings


def three_arm_results() -> dict:
    settings = BenchmarkSettings(scenarios=("read",), pairs=9)
    startup = {arm: StartupSamples([1.2, 1.3, 1.4], [1.0, 1.1, 1.2]) for arm in settings.apps}
    return build(
        [make_run("read", three_arm_rounds(100.0, 200.0, 300.0))], settings, startup=startup
    )


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of the three-arm run, written once for the tests that read it."""
    return write_html_report(tmp_path_factory.mktemp("html"), three_arm_results())


def test_report_html_is_one_self_contained_page(written: Path) -> None:
    path = written
    html = path.read_text()
    assert html.startswith("<!DOCTYPE html>")
    # ratios, r/s, latency, CPU, memory, start-up
    assert html.count("<svg") == 6
    assert "<script" not in html and "<link" not in html and "<img" not in html
    # No reference leaves the file: the only URLs are XML namespaces.
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert "READ v2-latest/v2 [95% CI]" in html and "1.50x [1.50–1.50]" in html
    assert (path.parent / "ratios.svg").read_text().startswith("<svg")


def test_the_host_fields_of_a_results_file_are_text_not_markup(tmp_path: Path) -> None:
    """Issue 53: a results.json with a script in its host's cores and memory ran it when its
    report was rebuilt and opened (every other field was escaped)."""
    results = three_arm_results()
    attack = "<script>document.title='owned'</script>"
    # A host of its own: the factories share theirs between tests.
    results["host"] = {**results["host"], "cores": attack, "cores_available": attack}
    results["host"]["memory_gib"] = attack
    html = write_html_report(tmp_path, results).read_text()
    assert "<script" not in html
    assert html.count("&lt;script&gt;document.title=&#x27;owned&#x27;&lt;/script&gt;") == 3


def test_report_mode_rebuilds_a_run_and_compares_two(tmp_path: Path) -> None:
    first, second = tmp_path / "20260101T000000Z", tmp_path / "20260102T000000Z"
    for run_dir, results in ((first, build(steady_runs())), (second, three_arm_results())):
        run_dir.mkdir()
        (run_dir / "results.json").write_text(json.dumps(results))
    result = run_in_process("report", str(first), "--results-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (first / "report.html").exists() and (first / "report.md").exists()
    assert "READ ratio to v1 [95% CI]" in result.stdout
    # Options may come between the run directories.
    result = run_in_process("report", str(first), "--results-dir", str(tmp_path), str(second))
    assert result.returncode == 0, result.stderr
    comparison = tmp_path / "compare-20260101T000000Z-vs-20260102T000000Z.html"
    assert comparison.read_text().count("<svg") == 1
    assert "READ v2/v1 [95% CI]" in result.stdout
    # The second run's third arm is kept, though the first run lacks it.
    assert "READ v2-latest/v2 [95% CI]" in result.stdout and "v2-latest start-up" in result.stdout


def test_report_mode_reads_a_schema_2_run(tmp_path: Path) -> None:
    results = build(steady_runs())
    results["schema_version"] = 2
    del results["kind"]
    del results["ratios_between_arms"]
    for figures in results["apps"].values():
        del figures["startup"]
    for ratios in results["ratios_vs_baseline"].values():  # version 2 spelt a ratio "ratio"
        for figures in ratios.values():
            figures["ratio"] = figures.pop("estimate")
            del figures["flags"]
    (tmp_path / "results.json").write_text(json.dumps(results))
    before = (tmp_path / "results.json").read_text()
    result = run_in_process("report", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "report.html").read_text().count("<svg") == 5  # no start-up chart
    assert "READ ratio to v1 [95% CI]" in result.stdout and "3.00x [3.00–3.00]" in result.stdout
    assert "results.json is schema_version 2: read as version 5" in result.stdout
    assert (tmp_path / "results.json").read_text() == before  # upgraded in memory only


def test_runs_without_ratios_draw_no_ratio_chart(tmp_path: Path) -> None:
    single = build(
        [make_run("read", [{"v2": 300.0}] * 8)],
        BenchmarkSettings(apps=("v2",), scenarios=("read",)),
    )
    assert "Paired ratios" not in write_html_report(tmp_path, single).read_text()
    assert not (tmp_path / "ratios.svg").exists()
    rounds = [{"v2": 300.0, "v2-latest": 330.0}] * 8
    pair = build(
        [make_run("read", rounds)], BenchmarkSettings(apps=("v2", "v2-latest"), scenarios=("read",))
    )
    write_html_report(tmp_path, pair)
    assert (tmp_path / "ratios.svg").exists()  # v2-latest/v2 is a ratio too


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["no-such-dir"], "no-such-dir is not a directory"),
        (["{empty}"], "holds no results.json (is it a run directory?)"),
        (
            ["{old}"],
            "has schema_version 1 and kind None; this version of the lab reads versions 2-5",
        ),
        (["{broken}"], "cannot read"),
        (["{mangled}", "{mangled}"], "both arguments are the same run"),
        (
            ["{mangled}"],
            "mangled/results.json lacks 'apps' where the lab writes one; was it edited?",
        ),
        (["{ladder}", "{mangled}"], "is a ladder run: two runs are compared for benchmark runs"),
        (["{ladder}"], "ladder/results.json lacks 'host' where the lab writes one; was it edited?"),
        (["{future}"], "has schema_version 6 and kind 'benchmark'"),
    ],
)
def test_report_mode_errors_are_one_line(tmp_path: Path, arguments, message: str) -> None:
    folders = {
        "empty": None,
        "old": '{"schema_version": 1}',
        "broken": "{",
        "mangled": '{"schema_version": 3}',
        "ladder": '{"kind": "ladder"}',
        "future": '{"schema_version": 6, "kind": "benchmark"}',
    }
    for name, content in folders.items():
        (tmp_path / name).mkdir()
        if content is not None:
            (tmp_path / name / "results.json").write_text(content)
    argv = [argument.format(**{n: str(tmp_path / n) for n in folders}) for argument in arguments]
    result = run_in_process("report", *argv)
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("./test.sh: error:") and message in line


def test_run_directories_belong_to_the_report_mode_only() -> None:
    result = run_in_process("dataset", "results/latest")
    assert result.returncode == 2
    assert "unrecognized arguments: results/latest (see ./test.sh dataset --help)" in result.stderr


@needs_chromium
def test_report_html_renders_its_charts_in_chromium_offline(written: Path, tmp_path: Path) -> None:
    pixels = screenshot_pixels(written, tmp_path)
    for arm in three_arm_results()["apps"]:
        # Every arm's bars are drawn: many pixels of exactly its colour.
        matching = pixels_of_arm(pixels, arm)
        assert matching > 2000, (arm, matching)
