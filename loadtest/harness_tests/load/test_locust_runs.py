"""Reading locust's JSON: throughput, histogram and CPU bookkeeping."""

import json
from collections import namedtuple
from pathlib import Path

from loadtest.load.locust_runs import busy_percent, read_locust_json


def test_read_locust_json_sums_entries_and_times_the_window(tmp_path: Path) -> None:
    entries = [
        {
            "name": "/a",
            "num_requests": 300,
            "num_failures": 10,
            "start_time": 100.0,
            "last_request_timestamp": 108.0,
            "response_times": {"10": 200, "20": 100},
        },
        {
            "name": "/b",
            "num_requests": 100,
            "num_failures": 0,
            "start_time": 102.0,
            "last_request_timestamp": 110.0,
            "response_times": {"20": 60, "110": 40},
        },
    ]
    json_path = tmp_path / "read.json"
    json_path.write_text(json.dumps(entries))
    log_path = tmp_path / "read.log"
    log_path.write_text("WARNING/root: CPU usage above 90%! ...\n")
    run = read_locust_json(json_path, log_path)
    assert (run.requests, run.failures, run.elapsed_s) == (400, 10, 10.0)
    assert run.rps == 39.0  # (400 - 10) successful requests over 10 s
    assert run.histogram == {10: 200, 20: 160, 110: 40}
    assert run.cpu_warnings == 1


def test_busy_percent_reads_only_the_given_cpus() -> None:
    Times = namedtuple("Times", "user system idle iowait")
    before = [Times(0, 0, 0, 0), Times(0, 0, 0, 0)]
    after = [Times(6, 2, 2, 0), Times(1, 0, 9, 0)]
    assert busy_percent(before, after, [0]) == 80.0
    assert busy_percent(before, after, [1]) == 10.0
    assert busy_percent(before, after, [0, 1]) == 45.0
