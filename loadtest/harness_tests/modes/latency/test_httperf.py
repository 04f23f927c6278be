"""The httperf check: its command line, its real output (fixtures/httperf/, captured from httperf
0.9.0 against uvicorn on loopback) read into the figures worked out by hand from the file, a real
short run, and its one-line errors."""

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_tests.runner import free_port
from loadtest.lab.asgi_server import asgi_server
from loadtest.lab.errors import LabError
from loadtest.modes.latency import httperf
from loadtest.modes.latency.httperf import (
    WHAT_HTTPERF_MEASURES,
    histogram_percentile,
    httperf_available,
    httperf_command,
    parse_httperf,
    run_httperf,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "httperf"
# 300 connections at a constant 100 r/s to an app that blocks its event loop for 200 ms on
# every 100th request: the ~20 requests sent during each stall wait out the rest of it.
CONSTANT_RATE_STALLS = FIXTURES / "constant_rate_stalls.txt"
# 600 connections, Poisson at 100 r/s, --timeout 0.2, to an app that sleeps 0-7 ms, answers
# 1 request in 20 with a 500 and 1 in 20 with a 404, and 1 in 50 only after 0.5 s.
POISSON_ERRORS = FIXTURES / "poisson_errors.txt"
needs_httperf = pytest.mark.skipif(not httperf_available(), reason="httperf is not installed")


def test_the_command_sends_one_request_per_connection_at_a_constant_rate() -> None:
    assert httperf_command("http://127.0.0.1:8001", "/posts?limit=5", 200, 2.5) == [
        "httperf",
        "--server",
        "127.0.0.1",
        "--port",
        "8001",
        "--uri",
        "/posts?limit=5",
        "--rate",
        "200",
        "--num-conns",
        "500",
        "--num-calls",
        "1",
        "--timeout",
        "10",
        "--verbose",
        "--verbose",
    ]


def test_the_poisson_command_gives_the_mean_gap_in_place_of_the_rate() -> None:
    command = httperf_command("http://localhost:9000/", "/", 400, 3, timeout_s=2.5, poisson=True)
    assert "--period=e0.0025" in command and "--rate" not in command
    assert command[command.index("--num-conns") + 1] == "1200"
    assert command[command.index("--timeout") + 1] == "2.5"
    assert "--hog" not in command  # it would bind client ports from 1024 up


@pytest.mark.parametrize(
    ("base_url", "rate", "duration_s", "message"),
    [
        ("https://127.0.0.1:8001", 100, 1, "plain http:// URLs only"),
        ("http://127.0.0.1:8001", 0, 1, "would send no request"),
        ("http://127.0.0.1:8001", 1, 0.2, "would send no request"),
    ],
)
def test_a_command_httperf_cannot_run_is_a_one_line_error(
    base_url: str, rate: float, duration_s: float, message: str
) -> None:
    with pytest.raises(LabError, match=message) as raised:
        httperf_command(base_url, "/", rate, duration_s)
    assert "\n" not in str(raised.value)


def test_a_constant_rate_capture_reads_as_its_figures() -> None:
    figures = parse_httperf(CONSTANT_RATE_STALLS.read_text())
    assert (figures.connections, figures.requests, figures.replies) == (300, 300, 300)
    assert figures.completed == 300  # the histogram's counts add up to the replies
    assert figures.replies_by_status == {"1xx": 0, "2xx": 300, "3xx": 0, "4xx": 0, "5xx": 0}
    assert figures.errors == 0 and set(figures.error_counts.values()) == {0}
    assert (figures.duration_s, figures.request_rate) == (2.991, 100.3)
    assert (figures.max_concurrent, figures.max_connect_burst) == (21, 1)
    # 233 of 300 in the first bucket; the 90% point (270th) is reached at 101.5 ms, the 99%
    # point (297th) at 191.5 ms; the slowest connection took 200.7 ms.
    assert (figures.p50_ms, figures.p90_ms, figures.p99_ms, figures.max_ms) == (
        0.5,
        101.5,
        191.5,
        200.7,
    )
    assert len(figures.histogram) == 26
    assert (figures.histogram[0.5], figures.histogram[51.5], figures.histogram[52.5]) == (
        233,
        1,
        2,
    )
    assert figures.connection_time_ms == {
        "min": 0.2,
        "avg": 21.7,
        "max": 200.7,
        "median": 0.5,
        "stddev": 49.7,
    }
    assert figures.connect_ms == 0.0
    assert figures.reply_time_ms == {"response": 21.7, "transfer": 0.0}


def test_a_poisson_capture_with_timeouts_and_error_statuses_reads_as_its_figures() -> None:
    figures = parse_httperf(POISSON_ERRORS.read_text())
    # 12 of the 600 connections timed out (1 in 50): no reply, so not in the histogram.
    assert (figures.connections, figures.requests, figures.replies) == (600, 600, 588)
    assert figures.completed == 588
    assert figures.replies_by_status == {"1xx": 0, "2xx": 528, "3xx": 0, "4xx": 30, "5xx": 30}
    assert figures.errors == 12
    assert figures.error_counts == {
        "client-timo": 12,
        "socket-timo": 0,
        "connrefused": 0,
        "connreset": 0,
        "fd-unavail": 0,
        "addrunavail": 0,
        "ftab-full": 0,
        "other": 0,
    }
    assert figures.error_lines == (
        "Errors: total 12 client-timo 12 socket-timo 0 connrefused 0 connreset 0",
        "Errors: fd-unavail 0 addrunavail 0 ftab-full 0 other 0",
    )
    assert (figures.duration_s, figures.request_rate) == (5.752, 104.3)
    assert (figures.max_concurrent, figures.max_connect_burst) == (5, 3)
    # Running counts 293 at 3.5 ms, 365 at 4.5 (the 294th: p50), 514 at 6.5 and 584 at 7.5 ms
    # (the 529.2th and the 582.12th: p90 and p99).
    assert (figures.p50_ms, figures.p90_ms, figures.p99_ms, figures.max_ms) == (
        4.5,
        7.5,
        7.5,
        10.6,
    )
    assert figures.histogram == {
        0.5: 74,
        1.5: 70,
        2.5: 78,
        3.5: 71,
        4.5: 72,
        5.5: 77,
        6.5: 72,
        7.5: 70,
        8.5: 2,
        10.5: 2,
    }
    assert figures.connection_time_ms["median"] == 4.5
    assert figures.reply_time_ms == {"response": 3.9, "transfer": 0.0}


@pytest.mark.parametrize("capture", [CONSTANT_RATE_STALLS, POISSON_ERRORS], ids=lambda p: p.stem)
def test_p50_is_httperfs_own_median(capture: Path) -> None:
    figures = parse_httperf(capture.read_text())
    assert figures.p50_ms == figures.connection_time_ms["median"]


def test_a_percentile_is_the_midpoint_of_the_bucket_reaching_it() -> None:
    histogram = {0.5: 7, 1.5: 93}
    assert histogram_percentile(histogram, 0.07) == 0.5  # 0.07 * 100 is 7.000000000000001
    assert histogram_percentile(histogram, 0.08) == 1.5
    assert histogram_percentile(histogram, 1.0) == 1.5


def test_the_figures_are_json_and_say_what_they_include() -> None:
    figures = parse_httperf(POISSON_ERRORS.read_text())
    written = json.loads(json.dumps(figures.as_dict()))
    assert written["histogram"]["10.5"] == 2 and written["p99_ms"] == 7.5
    assert written["what_it_includes"] == WHAT_HTTPERF_MEASURES
    assert "connect" in WHAT_HTTPERF_MEASURES and "coordinated omission" in WHAT_HTTPERF_MEASURES


def test_output_without_a_histogram_is_a_one_line_error() -> None:
    # What httperf prints with a single --verbose: the same, less the histogram.
    lines = CONSTANT_RATE_STALLS.read_text().splitlines()
    start = lines.index("Connection lifetime histogram (time in ms):")
    end = lines.index("", start)
    with pytest.raises(LabError, match="no connection-lifetime histogram") as raised:
        parse_httperf("\n".join(lines[:start] + lines[end + 1 :]))
    assert "\n" not in str(raised.value)
    with pytest.raises(LabError, match="no connection-lifetime histogram"):
        parse_httperf("")


def test_a_missing_httperf_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(httperf, "HTTPERF", "httperf-not-installed-here")
    assert not httperf_available()
    with pytest.raises(LabError, match="apt-get install httperf") as raised:
        run_httperf("http://127.0.0.1:1", "/", 10, 1)
    assert "\n" not in str(raised.value)


@pytest.fixture
def trivial_server(tmp_path: Path) -> Iterator[str]:
    """The near-free endpoint, served by uvicorn on a free port: its base URL."""
    with asgi_server(
        "loadtest.load.trivial_app:app", tmp_path / "trivial_app.log", port=free_port()
    ) as served:
        yield served.url


@needs_httperf
def test_httperf_runs_for_real_against_a_trivial_server(trivial_server: str) -> None:
    cpus = tuple(sorted(os.sched_getaffinity(0)))[-1:]  # the pinning path, on a CPU we have
    figures = run_httperf(trivial_server, "/", 100, 1.0, cpus=cpus)
    assert figures.connections == 100  # rate x duration
    assert figures.completed == figures.replies_by_status["2xx"] == 100, figures.error_lines
    assert math.isfinite(figures.p50_ms) and figures.p50_ms >= 0
    assert figures.p50_ms <= figures.p90_ms <= figures.p99_ms
    assert sum(figures.histogram.values()) == figures.completed


@needs_httperf
def test_a_run_that_completes_no_connection_is_a_one_line_error() -> None:
    port = free_port()  # nothing listens there: every connection is refused
    with pytest.raises(LabError, match="completed no connection.*connrefused 5") as raised:
        run_httperf(f"http://127.0.0.1:{port}", "/", 20, 0.25)
    assert "\n" not in str(raised.value)


@needs_httperf
def test_httperf_failing_is_a_one_line_error_with_its_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(httperf, "httperf_command", lambda *_, **__: ["httperf", "--bogus"])
    with pytest.raises(LabError, match="unrecognized option '--bogus'") as raised:
        run_httperf("http://127.0.0.1:1", "/", 10, 1)
    assert "\n" not in str(raised.value)
