"""A benchmark's results.json: window records, medians, paired ratios with
CIs, start-up, flags."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from harness_tests.factories import (
    TWO_ARMS,
    build,
    make_life,
    make_run,
    steady_rounds,
    steady_runs,
    three_arm_rounds,
)
from loadtest.analysis.paired_windows import window_ratios
from loadtest.lab.pinning import plan_pinning
from loadtest.lab.startup import StartupSamples
from loadtest.modes.registry import KINDS
from loadtest.output.results_file import SCHEMA_VERSION, read_results, write_results
from loadtest.output.run_folder import link_latest
from loadtest.pipeline.results import build_results
from loadtest.pipeline.settings import BenchmarkSettings

WINDOW_KEYS = {
    "arm",
    "variant",
    "scenario",
    "window",
    "started_at",
    "duration_s",
    "requests",
    "failures",
    "rps",
    "app_cpu_s",
    "db_cpu_s",
    "p50_ms",
    "p95_ms",
    "p99_ms",
}


def test_build_results_has_the_documented_keys() -> None:
    results = build(steady_runs())
    assert (results["schema_version"], results["kind"]) == (SCHEMA_VERSION, "benchmark")
    assert {
        "settings",
        "host",
        "apps",
        "load_generator",
        "ratios_vs_baseline",
        "ratios_between_arms",
        "windows",
        "flags",
    } <= set(results)
    for key in (
        "window_s",
        "settle_s",
        "pairs",
        "warmup_s",
        "repeats",
        "users",
        "baseline",
        "dataset_size",
        "pinning",
        "database",
        "arm_order",
    ):
        assert key in results["settings"]
    for arm in ("v1", "v2"):
        figures = results["apps"][arm]
        assert figures["versions"]["pydantic"].startswith("1." if arm == "v1" else "2.")
        assert {"idle_rss_mib", "peak_rss_mib", "after_rss_mib", "idle_uss_mib"} <= set(
            figures["memory"]
        )
        for scenario in figures["scenarios"].values():
            assert {
                "rps_median",
                "rps_min",
                "rps_max",
                "p50_ms",
                "p95_ms",
                "p99_ms",
                "windows",
                "app_cpu_ms_per_request",
                "db_cpu_ms_per_request",
                "failures",
                "requests",
                "flags",
            } <= set(scenario)
            assert scenario["windows"] == 8
    assert set(results["ratios_vs_baseline"]) == {"read", "write"}
    assert set(results["ratios_vs_baseline"]["read"]) == {"v2"}  # the baseline has no ratio
    assert {"estimate", "ci95_low", "ci95_high", "ci95_half_width", "pairs", "flags"} <= set(
        results["ratios_vs_baseline"]["read"]["v2"]
    )
    assert len(results["windows"]) == 2 * 2 * 8
    for window in results["windows"]:
        assert WINDOW_KEYS <= set(window)
    assert results["ratios_between_arms"] == {"read": {}, "write": {}}  # no v2-latest: none
    assert results["apps"]["v1"]["startup"] is None  # not measured


def test_three_arms_get_ratios_to_v1_and_v2_latest_to_v2() -> None:
    settings = BenchmarkSettings(scenarios=("read",), pairs=9)
    results = build([make_run("read", three_arm_rounds(100.0, 200.0, 300.0))], settings)
    assert set(results["ratios_vs_baseline"]["read"]) == {"v2", "v2-latest"}
    assert results["ratios_vs_baseline"]["read"]["v2"]["estimate"] == 2.0
    assert results["ratios_vs_baseline"]["read"]["v2-latest"]["estimate"] == 3.0
    between = results["ratios_between_arms"]["read"]
    assert set(between) == {"v2-latest/v2"}
    assert (between["v2-latest/v2"]["estimate"], between["v2-latest/v2"]["pairs"]) == (1.5, 9)
    assert between["v2-latest/v2"]["ci95_low"] == 1.5 and between["v2-latest/v2"]["flags"] == []


def test_a_wide_extra_comparison_is_flagged_by_its_own_name() -> None:
    rounds = [{"v1": 100.0, "v2": 200.0, "v2-latest": 200.0 + 60.0 * (i % 4)} for i in range(8)]
    results = build([make_run("read", rounds)], BenchmarkSettings(scenarios=("read",)))
    [flag] = results["ratios_between_arms"]["read"]["v2-latest/v2"]["flags"]
    assert flag.startswith("95% CI ±") and flag.endswith("is wider than ±5%")
    [summary] = [flag for flag in results["flags"] if flag.startswith("95% CI wider than ±5%")]
    assert "READ v2-latest/v2 ±" in summary and "READ v2/v1" not in summary


def test_startup_is_the_median_of_fresh_starts_with_every_sample() -> None:
    samples = {
        "v1": StartupSamples([1.5, 1.2, 1.3], [0.9, 0.7, 0.8]),
        "v2": StartupSamples([1.6, 1.8, 1.7], [1.0, 1.2, 1.1]),
    }
    results = build(steady_runs(), startup=samples)
    v2 = results["apps"]["v2"]["startup"]
    assert (v2["to_health_s"], v2["to_health_s_min"], v2["to_health_s_max"]) == (1.7, 1.6, 1.8)
    assert (v2["import_s"], v2["import_s_samples"], v2["samples"]) == (1.1, [1.0, 1.2, 1.1], 3)
    assert results["apps"]["v1"]["startup"]["to_health_s"] == 1.3


def test_ratio_is_the_median_of_paired_window_ratios_with_its_ci() -> None:
    # Machine speed drifts from round to round; the pairs keep the ratio near 2.
    v1 = [100.0, 125.0, 75.0, 100.0, 125.0, 75.0]
    v2 = [200.0, 262.5, 142.5, 210.0, 250.0, 157.5]  # pair ratios 2.0 2.1 1.9 2.1 2.0 2.1
    rounds = [
        {"v1": a, "v2": b} if i % 2 == 0 else {"v2": b, "v1": a}
        for i, (a, b) in enumerate(zip(v1, v2, strict=True))
    ]
    results = build(
        [make_run("read", rounds)], BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",))
    )
    read = results["ratios_vs_baseline"]["read"]["v2"]
    assert (read["estimate"], read["ci95_low"], read["ci95_high"], read["pairs"]) == (
        2.05,
        1.9,
        2.1,
        6,
    )
    assert read["ci95_half_width"] == pytest.approx(0.15 / 2.05, abs=1e-4)
    assert read["per_repeat"] == [{"repeat": 1, "pairs": 6, "estimate": 2.05}]
    assert read["flags"] == ["95% CI ±7.3% is wider than ±5%"]
    assert any("95% CI wider than ±5%: READ v2/v1 ±7.3%." in flag for flag in results["flags"])
    v1_read = results["apps"]["v1"]["scenarios"]["read"]
    assert (v1_read["rps_median"], v1_read["rps_min"], v1_read["rps_max"]) == (100.0, 75.0, 125.0)


def test_pairs_join_windows_of_the_same_round_and_repeat_only() -> None:
    first = make_run("read", [{"v1": 100.0, "v2": 300.0}], repeat=1)
    second = make_run("read", [{"v2": 250.0, "v1": 50.0}], repeat=2)
    windows = first.windows + second.windows
    assert window_ratios(windows, "read", "v2", "v1") == [3.0, 5.0]
    assert window_ratios(first.windows[:1], "read", "v2", "v1") == []  # no partner: no pair


def test_steady_ratios_are_not_flagged() -> None:
    results = build(steady_runs())
    assert results["ratios_vs_baseline"]["read"]["v2"]["estimate"] == 3.0
    assert results["ratios_vs_baseline"]["read"]["v2"]["ci95_half_width"] == 0.0
    assert results["flags"] == []
    assert results["load_generator"]["headroom"] == round(6000.0 / 400.0, 2)


def test_the_cost_ratio_stands_beside_the_throughput_ratio() -> None:
    """Each arm's app CPU per request, paired by round as the r/s are: both arms kept their CPU
    as busy, so three times the r/s is a third of the CPU per request, and nothing is flagged."""
    results = build(
        [make_run("read", steady_rounds(100.0, 300.0))],
        BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)),
    )
    cpu = results["ratios_vs_baseline"]["read"]["v2"]["cpu_per_request"]
    assert (cpu["estimate"], cpu["pairs"], cpu["ci95_half_width"]) == (0.3333, 8, 0.0)
    assert results["flags"] == []


def test_a_throughput_that_does_not_follow_the_cost_is_flagged() -> None:
    """Three times the r/s for the same CPU per request: what set the throughput was not the
    app's own cost (an arm that waited on its database, say)."""
    run = make_run("read", steady_rounds(100.0, 300.0))
    run.windows = [
        replace(record, app_cpu_s=record.app_cpu_s * 3) if record.arm == "v2" else record
        for record in run.windows
        if record.app_cpu_s is not None
    ]
    results = build([run], BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)))
    cpu = results["ratios_vs_baseline"]["read"]["v2"]["cpu_per_request"]
    assert cpu["estimate"] == 1.0
    assert results["flags"] == [
        "READ v2/v1: throughput 3.00x [3.00–3.00] but app CPU per request 1.00x [1.00–1.00] (as "
        "throughput 1.00x [1.00–1.00]): the throughput did not follow the app's own cost, so "
        "something else set it (the database, a lock, I/O, or a load that kept the app's CPU "
        "from being the limit)"
    ]


def test_an_arm_whose_cpu_was_not_read_has_no_cost_ratio() -> None:
    run = make_run("read", steady_rounds(100.0, 300.0))
    run.windows = [
        replace(record, app_cpu_s=None) if record.arm == "v2" else record for record in run.windows
    ]
    results = build([run], BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)))
    assert results["ratios_vs_baseline"]["read"]["v2"]["cpu_per_request"] is None
    assert "app CPU per request" not in " ".join(results["flags"])


def test_too_few_pairs_for_a_ci_are_flagged() -> None:
    results = build(
        [make_run("read", steady_rounds(100.0, 200.0, rounds=4))],
        BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)),
    )
    ratio = results["ratios_vs_baseline"]["read"]["v2"]
    assert (ratio["estimate"], ratio["ci95_low"], ratio["pairs"]) == (2.0, None, 4)
    assert ratio["flags"] == ["4 pairs are too few for a 95% interval (need 6)"]
    assert (
        "READ v2/v1: too few pairs for a 95% interval (need 6); add pairs (--pairs, --repeats)"
        in results["flags"]
    )


def test_failed_requests_are_flagged_and_never_throughput() -> None:
    results = build(
        [make_run("read", steady_rounds(100.0, 300.0), failures=5)],
        BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)),
    )
    read_v1 = results["apps"]["v1"]["scenarios"]["read"]
    assert read_v1["rps_median"] == 100.0  # 80 successes in 0.8 s; the 5 failures do not count
    assert read_v1["failures"] == 40
    assert "READ v1: 40 of 680 requests failed" in results["flags"]


def test_unsaturated_synthetic_windows_are_flagged() -> None:
    run = make_run("synthetic", steady_rounds(100.0, 600.0), app_cpu_busy=0.7)
    results = build([run], BenchmarkSettings(apps=TWO_ARMS, scenarios=("synthetic",)))
    flags = results["apps"]["v2"]["scenarios"]["synthetic"]["flags"]
    assert flags and "8 of 8 windows left the app's CPU under 90% busy (lowest 70.0%)" in flags[0]
    assert results["load_generator"]["synthetic_app_cpu_busy_min"] == 0.7
    saturated = build(
        [make_run("synthetic", steady_rounds(100.0, 600.0), app_cpu_busy=0.95)],
        BenchmarkSettings(apps=TWO_ARMS, scenarios=("synthetic",)),
    )
    assert saturated["flags"] == []


def test_write_count_mismatch_is_flagged() -> None:
    results = build(
        [make_run("write", steady_rounds(400.0, 400.0), lost_writes=2)],
        BenchmarkSettings(apps=TWO_ARMS, scenarios=("write",)),
    )
    write_v1 = results["apps"]["v1"]["scenarios"]["write"]
    assert (write_v1["acknowledged_writes"], write_v1["new_rows"]) == (2560, 2558)
    assert any(
        "write count mismatch (repeat 1): 2560 acknowledged, 2558 new rows" in flag
        for flag in write_v1["flags"]
    )


def test_failed_verification_publishes_no_number() -> None:
    lives = [make_life("v1", problems={"read": ["status 500, expected 200"]}), make_life("v2")]
    # v1 failed verification, so the run held v2's windows alone.
    run = make_run("read", [{"v2": 300.0}] * 8)
    results = build([run], BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)), lives=lives)
    read_v1 = results["apps"]["v1"]["scenarios"]["read"]
    assert read_v1["rps_median"] is None and read_v1["p50_ms"] is None
    assert read_v1["flags"] == ["verification failed (repeat 1): status 500, expected 200"]
    assert results["ratios_vs_baseline"]["read"]["v2"]["estimate"] is None


def test_busy_load_generator_is_flagged() -> None:
    runs = [make_run("read", steady_rounds(100.0, 300.0), cpu_percent=95.0, cpu_warnings=2)]
    results = build(runs, BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)))
    assert "READ (repeat 1): load generator CPU-bound (2 locust warnings)" in results["flags"]
    assert "READ (repeat 1): load generator near its limit (locust at 95% CPU)" in results["flags"]


def test_a_single_arm_run_has_no_ratios() -> None:
    results = build(
        [make_run("read", [{"v2": 300.0}] * 8)],
        BenchmarkSettings(apps=("v2",), scenarios=("read",)),
    )
    assert results["settings"]["baseline"] is None
    assert results["ratios_vs_baseline"] == {"read": {}}


def test_results_file_round_trips_and_latest_points_at_newest(tmp_path: Path) -> None:
    results = build(steady_runs())
    for name in ("20260101T000000Z", "20260101T000100Z"):
        run_dir = tmp_path / name
        run_dir.mkdir()
        written = write_results(
            run_dir,
            "benchmark",
            {key: value for key, value in results.items() if key not in ("schema_version", "kind")},
        )
        link_latest(tmp_path, run_dir)
    assert written == results
    assert (tmp_path / "latest").resolve() == (tmp_path / "20260101T000100Z").resolve()
    assert json.loads((tmp_path / "latest" / "results.json").read_text()) == results
    assert read_results(tmp_path / "latest", KINDS) == results


def test_cross_check_ratios_stand_beside_locusts_and_disagreement_is_flagged() -> None:
    locust_runs = [
        make_run("read", steady_rounds(100.0, 200.0)),
        make_run("synthetic", steady_rounds(100.0, 500.0)),
    ]
    wrk_windows = (
        make_run("read", steady_rounds(125.0, 262.5)).windows  # 2.1x: agrees
        + make_run("synthetic", steady_rounds(100.0, 600.0)).windows  # 6x: 20% off
    )
    results = build_results(
        settings=BenchmarkSettings(
            apps=TWO_ARMS, scenarios=("read", "synthetic"), cross_check=True
        ),
        lives=[make_life("v1"), make_life("v2")],
        runs=locust_runs,
        calibration=None,
        database={"kind": "embedded", "server_version": "18"},
        pinning=plan_pinning(True, {0, 1}),
        cross_check_windows=wrk_windows,
        cross_check_tool="wrk 4.1.0",
    )
    cross = results["cross_check"]
    assert cross["tool"] == "wrk 4.1.0"
    read = cross["ratios_vs_baseline"]["read"]["v2"]
    assert (read["estimate"], read["locust_ratio"], read["disagreement"]) == (2.1, 2.0, 0.05)
    synthetic = cross["ratios_vs_baseline"]["synthetic"]["v2"]
    assert (synthetic["estimate"], synthetic["disagreement"]) == (6.0, 0.2)
    assert cross["rps_median"]["synthetic"] == {"v1": 100.0, "v2": 600.0}
    disagreements = [flag for flag in results["flags"] if "disagree" in flag]
    assert disagreements == [
        "READ synthetic v2/v1: locust 5.00x and wrk 4.1.0 6.00x disagree by 20% (over 10%): one "
        "tool may have limited the windows; compare their saturation and rerun"
    ]
    assert len(cross["windows"]) == 32


def test_without_the_cross_check_its_section_is_null() -> None:
    assert build(steady_runs())["cross_check"] is None


def test_an_arm_still_busy_in_the_next_window_is_flagged() -> None:
    spilled = build(
        [make_run("read", steady_rounds(100.0, 300.0), other_arms_busy=0.2)],
        BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)),
    )
    flags = spilled["apps"]["v2"]["scenarios"]["read"]["flags"]
    assert flags == [
        "in 8 of 8 windows another arm was still busy (up to 20% of a CPU): the "
        "previous arm's requests outlast the settling time; use fewer --users"
    ]
    quiet = build(
        [make_run("read", steady_rounds(100.0, 300.0), other_arms_busy=0.04)],
        BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)),
    )
    assert quiet["flags"] == []


def test_empty_windows_missing_warm_up_and_uncounted_failures_are_flagged() -> None:
    run = make_run("read", steady_rounds(100.0, 300.0))
    run.windows[0] = replace(run.windows[0], requests=0, failures=0)  # v1 served nothing
    run.warmup_requests["v2"] = 0
    run.failures["v1"] = 3  # in warm-up or settling: none in the counted windows
    results = build([run], BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)))
    v1_flags = results["apps"]["v1"]["scenarios"]["read"]["flags"]
    assert "3 requests failed in warm-up or settling time" in v1_flags
    assert any(f.startswith("1 of 8 windows served no request") for f in v1_flags)
    v2_flags = results["apps"]["v2"]["scenarios"]["read"]["flags"]
    assert any(f.startswith("no warm-up (repeat 1)") for f in v2_flags)
    assert results["ratios_vs_baseline"]["read"]["v2"]["pairs"] == 7  # the empty pair is left out


def test_other_programs_on_the_app_cpu_are_flagged() -> None:
    crowded = build(
        [make_run("read", steady_rounds(100.0, 300.0), foreign_busy=0.5)],
        BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)),
    )
    assert crowded["apps"]["v1"]["scenarios"]["read"]["flags"] == [
        "in 8 of 8 windows other programs used the app's CPU (up to 50% of it): something else "
        "is running (another ./test.sh?); stop it and rerun"
    ]
    assert crowded["windows"][0]["foreign_cpu_s"] == 0.4
    quiet = build(
        [make_run("read", steady_rounds(100.0, 300.0), foreign_busy=0.1)],
        BenchmarkSettings(apps=TWO_ARMS, scenarios=("read",)),
    )
    assert quiet["flags"] == []
