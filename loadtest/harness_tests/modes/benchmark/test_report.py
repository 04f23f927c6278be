"""The table and report.md, rendered from results alone."""

from pathlib import Path
from typing import Any

from harness_tests.factories import (
    TWO_ARMS,
    build,
    make_life,
    make_run,
    steady_rounds,
    steady_runs,
    three_arm_rounds,
)
from loadtest.analysis.clusters import CLUSTER_METHOD, POOLED_METHOD
from loadtest.lab.memory import MemoryReading
from loadtest.lab.startup import StartupSamples
from loadtest.pipeline.html import write_html_report
from loadtest.pipeline.report import write_report
from loadtest.pipeline.settings import BenchmarkSettings
from loadtest.pipeline.tables import (
    comparison_rows,
    flags_line,
    interval_limit_text,
    load_generator_lines,
    ratio_caption,
    ratio_methods,
    ratio_sentence,
    summary_lines,
    table_rows,
)


def test_table_has_an_arm_per_column_and_ratios_with_their_ci() -> None:
    header, rows = table_rows(build(steady_runs()))
    assert header == [
        "metric",
        "v1 · Pydantic 1.10.27 · FastAPI 0.125.0",
        "v2 · Pydantic 2.14.3 · FastAPI 0.125.0",
    ]
    by_metric = {row[0]: row[1:] for row in rows}
    assert by_metric["READ r/s"] == ["100.0 (100.0–100.0)", "300.0 (300.0–300.0)"]
    assert by_metric["READ ratio to v1 [95% CI]"] == ["baseline", "3.00x [3.00–3.00]"]
    assert by_metric["READ p50 / p95 / p99 ms"] == ["10 / 20 / 20", "10 / 20 / 20"]
    assert by_metric["READ CPU ms/request, app"] == ["9.70", "3.23"]  # 0.776 s / 80 and / 240
    assert by_metric["memory idle, RSS (USS) MiB"][0] == "71.0 (60.0)"


def test_flagged_cells_are_marked(tmp_path: Path) -> None:
    results = build(
        [make_run("read", steady_rounds(100.0, 300.0), failures=5)],
        BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)),
    )
    _, rows = table_rows(results)
    assert rows[0][1].endswith("⚠") and not rows[0][2].endswith("⚠")
    report = write_report(tmp_path, results).read_text()
    assert "- READ v1: 40 of 680 requests failed" in report


def test_report_lists_settings_versions_and_the_load_generator(tmp_path: Path) -> None:
    report = write_report(tmp_path, build(steady_runs())).read_text()
    assert report.startswith("# v1 vs v2 — benchmark report\n\nv1 vs v2 — 10 users, 8 pairs")
    assert "| READ ratio to v1 [95% CI] | baseline | 3.00x [3.00–3.00] |" in report
    assert "| pydantic | 1.10.27 | 2.14.3 |" in report
    assert "| pairs (rounds) per scenario and repeat | 8 |" in report
    assert "Load generator: locust drove 6,000.0 r/s against a trivial endpoint" in report
    assert "## Flags\n\n- none" in report
    host = "Test CPU, 2 cores (2 available), 8.0 GiB, Linux test, Python 3.11.7"
    assert f"{host} (its build was not recorded)." in report  # HOST holds no interpreter build


def test_the_load_generator_story_follows_the_synthetic_windows() -> None:
    saturated = build(
        [make_run("synthetic", steady_rounds(100.0, 600.0), app_cpu_busy=0.97)],
        BenchmarkSettings(apps=TWO_ARMS, scenarios=("synthetic",)),
    )
    assert load_generator_lines(saturated)[1] == (
        "READ synthetic: the app kept 97%–97% of its CPU busy; the app was the limit in every "
        "window."
    )
    starved = build(
        [make_run("synthetic", steady_rounds(100.0, 600.0), app_cpu_busy=0.6)],
        BenchmarkSettings(apps=TWO_ARMS, scenarios=("synthetic",)),
    )
    assert "under 90% in some windows" in load_generator_lines(starved)[1]


def test_a_flagged_ratio_is_marked() -> None:
    rounds = [{"v1": 100.0, "v2": 200.0 + 25.0 * (i % 4)} for i in range(8)]
    _, rows = table_rows(
        build([make_run("read", rounds)], BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)))
    )
    ratio_row = next(row for row in rows if row[0] == "READ ratio to v1 [95% CI]")
    assert ratio_row[2].endswith("⚠") and ratio_row[2] == "2.38x [2.00–2.75] ⚠"


def test_three_arms_show_v2_latest_over_v2_and_start_up() -> None:
    settings = BenchmarkSettings(scenarios=("read",), pairs=9)
    startup = {
        arm: StartupSamples([1.0 + i, 1.2 + i, 1.1 + i], [0.5, 0.5, 0.5])
        for i, arm in enumerate(settings.apps)
    }
    results = build(
        [make_run("read", three_arm_rounds(100.0, 200.0, 300.0))], settings, startup=startup
    )
    header, rows = table_rows(results, separator="\n")
    assert header[3] == "v2-latest\nPydantic 2.14.3\nFastAPI 0.165.0"
    by_metric = {row[0]: row[1:] for row in rows}
    assert by_metric["READ ratio to v1 [95% CI]"] == [
        "baseline",
        "2.00x [2.00–2.00]",
        "3.00x [3.00–3.00]",
    ]
    assert by_metric["READ v2-latest/v2 [95% CI]"] == ["", "reference", "1.50x [1.50–1.50]"]
    assert by_metric["start-up to first /health, s"] == [
        "1.10 (1.00–1.20)",
        "2.10 (2.00–2.20)",
        "3.10 (3.00–3.20)",
    ]
    assert by_metric["import of the app module, s"] == ["0.50"] * 3


def test_without_start_up_figures_there_are_no_start_up_rows() -> None:
    _, rows = table_rows(build(steady_runs()))
    assert not any(row[0].startswith("start-up") for row in rows)


def test_every_output_opens_with_the_answer_in_three_lines_and_a_verdict(tmp_path: Path) -> None:
    settings = BenchmarkSettings(scenarios=("read",), pairs=9)
    startup = {
        "v1": StartupSamples([1.2, 1.3, 1.4], [1.0, 1.1, 1.2]),
        "v2": StartupSamples([1.5, 1.6, 1.7], [1.3, 1.4, 1.5]),
        "v2-latest": StartupSamples([1.5, 1.6, 1.7], [1.3, 1.4, 1.5]),
    }
    results = build(
        [make_run("read", three_arm_rounds(100.0, 200.0, 300.0))], settings, startup=startup
    )
    lines = summary_lines(results)
    assert lines == [
        "Throughput over v1 (paired ratio, 95% CI): v2: READ 2.00x [2.00–2.00]; "
        "v2-latest: READ 3.00x [3.00–3.00].",
        "Start-up to the first /health (median): v1 1.30 s, v2 1.60 s (+0.30), "
        "v2-latest 1.60 s (+0.30).",
        "Memory, RSS idle / peak under load: v1 71.0 MiB / 91.0 MiB, v2 71.0 MiB (+0.0) / "
        "91.0 MiB (+0.0), v2-latest 71.0 MiB (+0.0) / 91.0 MiB (+0.0).",
    ]
    assert flags_line(results).startswith("No flags:")
    report = write_report(tmp_path, results).read_text()
    html = write_html_report(tmp_path, results).read_text()
    for text in (report, html):
        positions = [text.index(line.split(":")[0]) for line in lines]
        assert positions == sorted(positions) and positions[-1] < text.index("READ r/s")
        assert "The run is trustworthy as it stands." in text


def test_the_verdict_tells_flags_about_intervals_from_flags_about_the_run() -> None:
    wide = [{"v1": 100.0, "v2": 200.0 + 60.0 * (i % 4)} for i in range(8)]
    only_wide = build(
        [make_run("read", wide)], BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",))
    )
    assert flags_line(only_wide).startswith("1 flag, all about the width of intervals")
    failing = build(
        [make_run("read", wide, failures=5)], BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",))
    )
    assert flags_line(failing).startswith("2 flags, 1 about the run itself")


def test_two_runs_compare_their_ratios_start_up_and_memory() -> None:
    first, second = build(steady_runs()), build(steady_runs())
    header, rows = comparison_rows([("A", first), ("B", second)])
    by_metric = {row[0]: row[1:] for row in rows}
    assert header == ["metric", "A", "B"]
    assert by_metric["READ v2/v1 [95% CI]"] == ["3.00x [3.00–3.00]"] * 2
    assert by_metric["v2 memory idle / peak, RSS MiB"] == ["71.0 / 91.0"] * 2
    assert "v1 start-up to first /health, s" in by_metric


def test_docker_memory_is_named_by_where_it_was_read() -> None:
    """--docker as root reads the containers' process trees (RSS and USS, as a local run);
    otherwise docker stats, which has no USS. Runs before the source was recorded: docker stats."""
    docker = BenchmarkSettings(docker=True)
    direct = build(steady_runs(), settings=docker)
    assert direct["settings"]["memory_source"] == "process tree"
    assert "memory idle, RSS (USS) MiB" in {row[0] for row in table_rows(direct)[1]}
    stats_life = [make_life(arm) for arm in docker.apps]
    for life in stats_life:
        life.idle, life.peak, life.after = (MemoryReading(value, None) for value in (70, 75, 72))
    stats = build(steady_runs(), settings=docker, lives=stats_life)
    assert stats["settings"]["memory_source"] == "docker stats"
    metrics = {row[0] for row in table_rows(stats)[1]}
    assert "memory idle, container (docker stats) MiB" in metrics
    del direct["settings"]["memory_source"]  # results.json of a run before it was recorded
    assert "memory idle, container (docker stats) MiB" in {row[0] for row in table_rows(direct)[1]}


def test_the_reports_say_how_the_ratios_were_reached(tmp_path: Path) -> None:
    """Pooled pairs (below 5 repeats) or the interval over repeats: the table's caption and
    report.md's account follow each ratio's `method`, never the other's words."""
    pooled = build(steady_runs())
    assert ratio_methods(pooled) == [POOLED_METHOD]
    assert ratio_caption(pooled) == "Ratio: median of paired window ratios, 95% CI in brackets."
    over_repeats = build(steady_runs())
    for by_arm in over_repeats["ratios_vs_baseline"].values():
        for figures in by_arm.values():
            figures["method"] = CLUSTER_METHOD
    assert ratio_methods(over_repeats) == [CLUSTER_METHOD]
    report = write_report(tmp_path, over_repeats).read_text()
    assert "Student's t over the repeats" in report and "(order\nstatistics)" not in report
    html = write_html_report(tmp_path, over_repeats).read_text()
    assert "geometric mean of each repeat" in html and "median of paired window" not in html
    [figures] = over_repeats["ratios_vs_baseline"]["read"].values()
    figures["method"] = POOLED_METHOD  # one ratio short of pairs in a repeat: both, said so
    assert ratio_methods(over_repeats) == [POOLED_METHOD, CLUSTER_METHOD]
    assert "each ratio's `method` in results.json says which" in ratio_sentence(over_repeats)


def test_the_verdict_names_the_runs_own_limit_on_intervals() -> None:
    """compare's --precision is the width its verdict line promises; --quick's 0 and the
    benchmark keep ±5%."""
    assert interval_limit_text({"settings": {"precision": 0.1}}) == "±10%"
    assert interval_limit_text({"settings": {"precision": 0.0}}) == "±5%"
    assert interval_limit_text({"settings": {}}) == "±5%"
    results = build(steady_runs())
    results["settings"]["precision"] = 0.025
    assert "every 95% CI within ±2.5%" in flags_line(results)


def test_start_up_is_named_after_the_health_path_it_was_timed_to() -> None:
    """compare times a service's start-up to its own health path: the table, the summary line
    and the chart name it (one shared path by name, several as "health path"); the lab's
    runs keep /health."""
    import matplotlib.pyplot as plt

    from loadtest.output.results_file import read_results
    from loadtest.pipeline.charts import startup_figure
    from loadtest.pipeline.tables import health_path

    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "runs"
    results = read_results(fixtures / "compare", ["compare"])
    services = results["settings"]["services"]
    for service in services.values():
        service["health"] = "/api/v1/utils/health-check/"

    def named(results: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
        _, rows = table_rows(results)
        figure = startup_figure(results)
        assert figure is not None
        legend = [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
        plt.close(figure)
        return [row[0] for row in rows], summary_lines(results), legend

    rows, lines, legend = named(results)
    assert "start-up to first /api/v1/utils/health-check/, s" in rows
    first = "Start-up to the first /api/v1/utils/health-check/ ("
    assert any(line.startswith(first) for line in lines)
    assert "to first /api/v1/utils/health-check/" in legend
    next(iter(services.values()))["health"] = "/ready"
    rows, lines, legend = named(results)
    assert "start-up to first health path, s" in rows and "to first health path" in legend
    assert health_path(build(steady_runs())) == "/health"
