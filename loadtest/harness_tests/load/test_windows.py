"""Per-window accounting from locust's output, and CPU between two readings."""

import json
from pathlib import Path

import pytest

from loadtest.load.locust_runs import read_locust_json
from loadtest.load.schedule import build_schedule
from loadtest.load.windows import WindowCpu, build_window_records, per_slot, tally_by_name

SCHEDULE = build_schedule(
    scenario="write",
    hosts={"v1": "http://a", "v2": "http://b"},
    start=1000.0,
    rounds=2,
    window_s=1.0,
    settle_s=0.2,
    warmup_s=1.0,
)  # windows 0, 1: warm-up v1, v2; then 2: v1, 3: v2, 4: v2, 5: v1


def locust_entry(name: str, requests: int, failures: int, times: dict[str, int]) -> dict:
    """An entry as locust's --json-file writes it (fields the harness does not read included)."""
    return {
        "name": name,
        "method": "POST",
        "last_request_timestamp": 1009.0,
        "start_time": 1000.0,
        "num_requests": requests,
        "num_none_requests": 0,
        "num_failures": failures,
        "total_response_time": 0,
        "max_response_time": 0,
        "min_response_time": 0,
        "total_content_length": 0,
        "response_times": times,
        "num_reqs_per_sec": {},
        "num_fail_per_sec": {},
    }


def locust_output(tmp_path: Path) -> Path:
    entries = [
        locust_entry("v1 | 0 | warmup", 50, 0, {"12": 50}),
        locust_entry("v2 | 1 | warmup", 40, 1, {"11": 41}),
        locust_entry("v1 | 2 | settle", 9, 0, {"30": 9}),
        locust_entry("v1 | 2 | measured", 80, 2, {"10": 60, "20": 20, "110": 2}),
        locust_entry("v2 | 3 | measured", 160, 0, {"5": 150, "6": 10}),
        locust_entry("v2 | 4 | measured", 150, 0, {"5": 150}),
        locust_entry("v1 | 5 | measured", 70, 0, {"11": 70}),
        locust_entry("/health", 3, 0, {"1": 3}),  # not the harness's: ignored
    ]
    path = tmp_path / "write.json"
    path.write_text(json.dumps(entries))
    (tmp_path / "write.log").write_text("")
    return path


def test_windows_are_counted_from_locust_names(tmp_path: Path) -> None:
    run = read_locust_json(locust_output(tmp_path), tmp_path / "write.log")
    tallies = tally_by_name(run.entries)
    cpu = {2: WindowCpu(span_s=0.8, app_cpu_s=0.76, db_cpu_s=0.2)}
    records = build_window_records(
        schedule=SCHEDULE, tallies=tallies, cpu=cpu, repeat=1, app_cpu_capacity=1.0
    )
    assert [(r.slot, r.window, r.round) for r in records] == [
        ("v1", 2, 0),
        ("v2", 3, 0),
        ("v2", 4, 1),
        ("v1", 5, 1),
    ]
    first = records[0]
    assert (first.requests, first.failures) == (80, 2)
    assert first.duration_s == pytest.approx(0.8)
    assert first.rps == pytest.approx(78 / 0.8)  # successful requests only, over the span
    assert first.histogram == {10: 60, 20: 20, 110: 2}
    assert first.started_at == 1002.2
    assert first.app_cpu_busy == pytest.approx(0.76 / 0.8)
    assert first.app_cpu_ms_per_request == pytest.approx(1000 * 0.76 / 78)
    assert first.db_cpu_ms_per_request == pytest.approx(1000 * 0.2 / 78)
    assert records[1].app_cpu_s is None  # no CPU reading for that window
    assert records[1].as_dict()["p50_ms"] == 5


def test_acknowledged_requests_count_every_phase(tmp_path: Path) -> None:
    run = read_locust_json(locust_output(tmp_path), tmp_path / "write.log")
    # warm-up, settle and measured: every 2xx is a write the database must hold.
    tallies = tally_by_name(run.entries)
    assert per_slot(tallies, "successes") == {"v1": 50 + 9 + 78 + 70, "v2": 39 + 160 + 150}
    assert per_slot(tallies, "failures") == {"v1": 2, "v2": 1}
    assert per_slot(tallies, "requests", "warmup") == {"v1": 50, "v2": 40}


def test_a_window_locust_never_named_counts_zero(tmp_path: Path) -> None:
    records = build_window_records(
        schedule=SCHEDULE, tallies={}, cpu={}, repeat=2, app_cpu_capacity=1.0
    )
    assert [(r.requests, r.rps, r.repeat) for r in records] == [(0, 0.0, 2)] * 4
