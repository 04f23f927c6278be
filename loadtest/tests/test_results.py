"""results.json: medians, ratios, flags and the documented keys."""

import json
from datetime import UTC, datetime
from pathlib import Path

from loadtest.benchmark import interleaved_order
from loadtest.pinning import plan_pinning
from loadtest.results import build_results, link_latest, write_results
from loadtest.settings import BenchmarkSettings
from tests.factories import make_cell

SETTINGS = BenchmarkSettings(repeats=3, duration_s=10, scenarios=("read", "write"))
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def build(cells, settings=SETTINGS, calibration=None):
    return build_results(
        settings=settings,
        cells=cells,
        calibration=calibration or {"rps": 6000.0},
        host={
            "cpu_model": "Test CPU",
            "cores": 2,
            "cores_available": 2,
            "memory_gib": 8.0,
            "os": "Linux test",
            "python": "3.11.7",
        },
        database={"kind": "embedded", "server_version": "18"},
        pinning=plan_pinning(True, {0, 1}),
        started_at=NOW,
        finished_at=NOW,
    )


def steady_cells():
    base_rps = {"v1": 100.0, "v2": 300.0}
    return [
        make_cell(app, repeat, {"read": base_rps[app] + repeat, "write": 400.0})
        for repeat, apps in enumerate(interleaved_order(("v1", "v2"), 3))
        for app in apps
    ]


def test_build_results_has_the_documented_keys() -> None:
    results = build(steady_cells())
    assert {"settings", "host", "apps", "load_generator", "ratios_v2_over_v1"} <= set(results)
    for key in ("duration_s", "users", "repeats", "dataset_size", "pinning", "database"):
        assert key in results["settings"]
    for app in ("v1", "v2"):
        figures = results["apps"][app]
        assert figures["versions"]["pydantic"].startswith("1." if app == "v1" else "2.")
        assert set(figures["memory"]) >= {
            "idle_rss_mib", "peak_rss_mib", "after_rss_mib",
            "idle_uss_mib", "peak_uss_mib", "after_uss_mib",
        }  # fmt: skip
        for scenario in figures["scenarios"].values():
            assert set(scenario) >= {
                "rps_median", "rps_min", "rps_max", "p50_ms", "p95_ms", "p99_ms",
                "failures", "requests", "flags", "runs",
            }  # fmt: skip
            assert len(scenario["runs"]) == 3


def test_build_results_takes_medians_and_ratios() -> None:
    results = build(steady_cells())
    read_v1 = results["apps"]["v1"]["scenarios"]["read"]
    assert (read_v1["rps_median"], read_v1["rps_min"], read_v1["rps_max"]) == (101.0, 100.0, 102.0)
    assert results["ratios_v2_over_v1"]["read"] == round(301.0 / 101.0, 3)
    assert results["apps"]["v1"]["memory"]["idle_rss_mib"] == 71.0
    assert results["load_generator"]["headroom"] == round(6000.0 / 400.0, 2)
    assert read_v1["flags"] == []


def test_failures_and_cpu_bound_load_generator_are_flagged() -> None:
    cells = [make_cell("v1", 0, {"read": 100.0}, failures=3, cpu_warnings=2),
             make_cell("v2", 0, {"read": 300.0})]  # fmt: skip
    results = build(cells, BenchmarkSettings(repeats=1, scenarios=("read",)))
    flags = results["apps"]["v1"]["scenarios"]["read"]["flags"]
    assert any("3 of 1000 requests failed" in flag for flag in flags)
    assert any("CPU-bound" in flag for flag in flags)
    assert results["apps"]["v2"]["scenarios"]["read"]["flags"] == []


def test_failed_verification_publishes_no_number() -> None:
    broken = make_cell("v1", 0, {})
    broken.problems["read"] = ["status 500, expected 200"]
    results = build([broken, make_cell("v2", 0, {"read": 300.0})],
                    BenchmarkSettings(repeats=1, scenarios=("read",)))  # fmt: skip
    read_v1 = results["apps"]["v1"]["scenarios"]["read"]
    assert read_v1["rps_median"] is None and read_v1["p50_ms"] is None
    assert "verification failed" in read_v1["flags"][0]
    assert results["ratios_v2_over_v1"]["read"] is None


def test_write_count_mismatch_is_flagged() -> None:
    cell = make_cell("v1", 0, {"write": 100.0})
    cell.writes["write"] -= 2  # two acknowledged writes are not in the database
    results = build([cell, make_cell("v2", 0, {"write": 100.0})],
                    BenchmarkSettings(repeats=1, scenarios=("write",)))  # fmt: skip
    write_v1 = results["apps"]["v1"]["scenarios"]["write"]
    assert write_v1["runs"][0]["acknowledged_writes"] == 1000
    assert write_v1["runs"][0]["new_rows"] == 998
    assert any("write count mismatch" in flag for flag in write_v1["flags"])


def test_repeats_that_disagree_are_flagged() -> None:
    cells = [make_cell("v1", r, {"read": rps}) for r, rps in enumerate((100.0, 100.0, 130.0))]
    cells += [make_cell("v2", r, {"read": 300.0}) for r in range(3)]
    results = build(cells, BenchmarkSettings(repeats=3, scenarios=("read",)))
    assert any("spread 30%" in flag for flag in results["apps"]["v1"]["scenarios"]["read"]["flags"])


def test_interleaved_order_alternates_which_app_goes_first() -> None:
    assert interleaved_order(("v1", "v2"), 3) == [["v1", "v2"], ["v2", "v1"], ["v1", "v2"]]
    assert interleaved_order(("v2",), 2) == [["v2"], ["v2"]]


def test_results_file_round_trips_and_latest_points_at_newest(tmp_path: Path) -> None:
    results = build(steady_cells())
    for name in ("20260101T000000Z", "20260101T000100Z"):
        run_dir = tmp_path / name
        run_dir.mkdir()
        write_results(run_dir, results)
        link_latest(tmp_path, run_dir)
    assert (tmp_path / "latest").resolve() == (tmp_path / "20260101T000100Z").resolve()
    assert json.loads((tmp_path / "latest" / "results.json").read_text()) == results


def test_a_busy_load_generator_is_flagged_even_without_locust_warnings() -> None:
    cells = [make_cell("v1", 0, {"read": 100.0}, cpu_percent=95.0),
             make_cell("v2", 0, {"read": 300.0}, cpu_percent=40.0)]  # fmt: skip
    results = build(cells, BenchmarkSettings(repeats=1, scenarios=("read",)))
    v1_flags = results["apps"]["v1"]["scenarios"]["read"]["flags"]
    assert v1_flags == ["load generator near its limit (locust at 95% CPU)"]
    assert results["apps"]["v1"]["scenarios"]["read"]["runs"][0]["locust_cpu_percent"] == 95.0
    assert results["apps"]["v2"]["scenarios"]["read"]["flags"] == []


def test_a_repeat_failing_verification_withholds_the_whole_cell() -> None:
    failed_first = make_cell("v1", 0, {})
    failed_first.problems["read"] = ["3 posts, expected 100"]
    cells = [failed_first, make_cell("v1", 1, {"read": 100.0}), make_cell("v1", 2, {"read": 100.0})]
    cells += [make_cell("v2", r, {"read": 300.0}) for r in range(3)]
    results = build(cells, BenchmarkSettings(repeats=3, scenarios=("read",)))
    read_v1 = results["apps"]["v1"]["scenarios"]["read"]
    assert read_v1["rps_median"] is None and read_v1["requests"] == 0
    assert read_v1["flags"] == ["verification failed (repeat 1): 3 posts, expected 100"]


def test_failed_requests_do_not_count_as_throughput() -> None:
    cells = [make_cell("v1", 0, {"read": 100.0}, failures=200),
             make_cell("v2", 0, {"read": 300.0})]  # fmt: skip
    results = build(cells, BenchmarkSettings(repeats=1, scenarios=("read",)))
    assert results["apps"]["v1"]["scenarios"]["read"]["rps_median"] == 80.0  # 800 ok in 10 s


def test_busy_load_side_cpus_are_flagged() -> None:
    cells = [make_cell("v1", 0, {"read": 100.0}, load_cpus_busy_percent=97.0),
             make_cell("v2", 0, {"read": 300.0})]  # fmt: skip
    results = build(cells, BenchmarkSettings(repeats=1, scenarios=("read",)))
    assert results["apps"]["v1"]["scenarios"]["read"]["flags"] == [
        "load-side CPUs saturated (97% busy)"
    ]


def test_locust_cpu_limit_counts_only_load_cores_that_exist() -> None:
    # Two locust processes pinned to the one load CPU of a 2-CPU machine share one core.
    cells = [make_cell("v1", 0, {"read": 100.0}, cpu_percent=90.0),
             make_cell("v2", 0, {"read": 300.0})]  # fmt: skip
    results = build(cells, BenchmarkSettings(repeats=1, scenarios=("read",), load_processes=2))
    assert "locust at 90% CPU" in results["apps"]["v1"]["scenarios"]["read"]["flags"][0]
