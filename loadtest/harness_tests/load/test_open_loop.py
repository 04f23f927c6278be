"""The open-loop generator (loadtest.load.open_loop), against real uvicorn servers: a server
that freezes once for a second, seen as the ~100 requests due during the freeze coming out late
(where a closed loop sees one slow request), the schedule kept to the due times, the settle part
sent but not counted, failures counted by reason, and its process outliving a bad window and
never outliving its `with` block. The arrival times themselves are unit-tested at the end."""

import asyncio
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from hdrh.histogram import HdrHistogram

from harness_tests.runner import free_port
from loadtest.lab.asgi_server import asgi_server
from loadtest.lab.errors import LabError
from loadtest.load.open_loop.arrivals import arrival_offsets
from loadtest.load.open_loop.client import (
    BesideLoad,
    ClosedWindow,
    OpenLoopGenerator,
    OpenWindow,
)
from loadtest.load.open_loop.generator import Generator
from loadtest.load.open_loop.histograms import decoded, max_ms, percentile_ms
from loadtest.load.plan import Request

LOADTEST_DIR = Path(__file__).resolve().parents[2]  # where `harness_tests` is importable from
ROOT = Request("GET", "/", exact="ok")
RECORD = Request("GET", "/record", exact="ok")
TRIVIAL = Request("GET", "/", exact='{"posts":[]}')  # the trivial app's one answer

# The freeze: the stalling app blocks its event loop for FREEZE_S, FREEZE_AFTER_S into a
# window of WINDOW_S at RATE requests a second, evenly spaced.
RATE = 100
WINDOW_S = 4.0
FREEZE_AFTER_S = 1.5
FREEZE_S = 1.0


def serve(app: str, log_path: Path) -> Iterator[str]:
    """`app` served by uvicorn (this environment's) on a free port: its base URL."""
    with asgi_server(app, log_path, port=free_port(), app_dir=LOADTEST_DIR) as served:
        yield served.url


@pytest.fixture(scope="module")
def stalling(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log_path = tmp_path_factory.mktemp("stalling") / "stalling_app.log"
    yield from serve("harness_tests.load.stalling_app:app", log_path)


@pytest.fixture(scope="module")
def trivial(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log_path = tmp_path_factory.mktemp("trivial") / "trivial_app.log"
    yield from serve("loadtest.load.trivial_app:app", log_path)


@pytest.fixture(scope="module")
def generator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenLoopGenerator]:
    with OpenLoopGenerator(tmp_path_factory.mktemp("generator") / "generator.log") as started:
        yield started


def arm_freeze(base_url: str, after_s: float = FREEZE_AFTER_S, sleep_s: float = FREEZE_S) -> None:
    answer = httpx.get(f"{base_url}/arm", params={"after_s": after_s, "sleep_s": sleep_s})
    assert answer.status_code == 200


def count_between(histogram: HdrHistogram, low_s: float, high_s: float) -> int:
    """How many latencies lie in [low_s, high_s)."""
    return sum(
        item.count_at_value_iterated_to
        for item in histogram.get_recorded_iterator()
        if low_s * 1e6 <= item.value_iterated_to < high_s * 1e6
    )


@pytest.mark.alone
def test_a_one_second_freeze_makes_the_requests_due_during_it_late(
    stalling: str, generator: OpenLoopGenerator
) -> None:
    arm_freeze(stalling)
    answer = generator.run(
        OpenWindow(
            f"{stalling}/",
            ROOT,
            RATE,
            WINDOW_S,
            seed=1,
            process="constant",
            connections=256,  # more than can be in flight during the freeze: none waits
        )
    )
    # Arrivals went on through the freeze: every due time was sent, counted and answered.
    total = int(RATE * WINDOW_S)
    assert (answer["scheduled"], answer["counted"], answer["completed"]) == (total,) * 3
    assert answer["failures"] == {}
    assert answer["waited_for_connection"] == 0
    lateness = decoded(answer["lateness_us"])
    assert lateness.get_total_count() == total
    # The scheduling thread did not wait for the frozen server: no request went out anywhere
    # near the freeze's length after its due time.
    late_ms = max_ms(lateness)
    assert late_ms is not None and late_ms < 250

    latency = decoded(answer["latency_us"])
    assert latency.get_total_count() == total
    # The first request to arrive 1.5 s in (call it request 0) waits out the whole freeze, and
    # request j, due j x 10 ms after it, waits for what is left of it: about 1.0 - 0.01 j
    # seconds, plus its turn in the backlog the server works through once it wakes (~100
    # requests on ~100 new connections: a few ms to a few tens of ms). Over 100 ms: j = 0..90
    # (91 requests; j = 90 is due 0.9 s in and waits 0.1 s plus its turn), and a few more if
    # the backlog takes over 10 ms: between 85 and 105 allowing for the machine's noise. The
    # rest (~300 requests) are answered at once.
    late = count_between(latency, 0.1, 600)
    assert 85 <= late <= 105, late
    assert count_between(latency, 0, 0.05) >= total - late - 10
    # Spread from ~1 s down to ~0, evenly (one request every 10 ms of the freeze): ~20 in
    # each 200 ms band, ~10 from 0.9 s up.
    for low_s in (0.1, 0.3, 0.5, 0.7):
        band = count_between(latency, low_s, low_s + 0.2)
        assert 15 <= band <= 25, (low_s, band)
    top = count_between(latency, 0.9, 600)
    assert 6 <= top <= 16, top
    longest_ms = max_ms(latency)
    assert longest_ms is not None and 950 <= longest_ms <= 1300
    # p99 (the 396th of 400) lies among the requests that waited out most of the freeze.
    p99_ms = percentile_ms(latency, 99)
    assert p99_ms is not None and p99_ms >= 500


@pytest.mark.alone
def test_a_closed_loop_over_the_same_freeze_sees_one_slow_request(
    stalling: str, generator: OpenLoopGenerator
) -> None:
    arm_freeze(stalling)
    answer = generator.run(ClosedWindow(f"{stalling}/", ROOT, duration_s=3.0, connections=1))
    assert answer["failures"] == {}
    latency = decoded(answer["latency_us"])
    # The one request in flight when the server froze paid for it; nothing was sent during
    # it, so nothing else did.
    assert count_between(latency, 0.1, 600) == 1
    longest_ms = max_ms(latency)
    assert longest_ms is not None and longest_ms >= 950
    # Back to back, the loop sent far more than 100 requests: one slow one is not its p99,
    # which stays far below the open loop's (>= 500 ms over the same freeze).
    assert answer["completed"] > 100
    p99_ms = percentile_ms(latency, 99)
    assert p99_ms is not None and p99_ms < 100


@pytest.mark.alone
def test_requests_go_out_at_their_due_times(
    stalling: str, trivial: str, generator: OpenLoopGenerator
) -> None:
    answer = generator.run(OpenWindow(f"{trivial}/", TRIVIAL, 50, 1.0, seed=3, process="constant"))
    assert (answer["scheduled"], answer["counted"], answer["completed"]) == (50, 50, 50)
    assert answer["failures"] == {}
    assert decoded(answer["lateness_us"]).get_total_count() == 50
    assert decoded(answer["latency_us"]).get_total_count() == 50
    assert answer["counted_s"] == pytest.approx(1.0)

    httpx.get(f"{stalling}/recorded")  # forget what earlier tests left
    answer = generator.run(
        OpenWindow(f"{stalling}/record", RECORD, 50, 1.0, seed=3, process="constant")
    )
    assert answer["completed"] == 50
    arrivals = httpx.get(f"{stalling}/recorded").json()
    assert len(arrivals) == 50
    gaps = [later - earlier for earlier, later in zip(arrivals, arrivals[1:], strict=False)]
    # Every 20 ms: this checks the schedule, not anyone's speed, so the bounds are wide.
    assert 0.015 <= statistics.median(gaps) <= 0.025
    assert 0.9 <= arrivals[-1] - arrivals[0] <= 1.1  # 49 gaps of 20 ms: 0.98 s


def test_the_settle_part_is_sent_but_not_counted(
    stalling: str, generator: OpenLoopGenerator
) -> None:
    rate, duration_s, settle_s, seed = 60, 1.0, 0.4, 7
    offsets = arrival_offsets(rate, duration_s, seed=seed, process="poisson")
    counted = sum(offset >= settle_s for offset in offsets)
    assert 0 < counted < len(offsets)  # the seed puts due times on both sides
    httpx.get(f"{stalling}/recorded")
    answer = generator.run(
        OpenWindow(f"{stalling}/record", RECORD, rate, duration_s, seed=seed, settle_s=settle_s)
    )
    assert answer["scheduled"] == len(offsets)
    assert answer["counted"] == answer["completed"] == counted
    assert decoded(answer["latency_us"]).get_total_count() == counted
    assert decoded(answer["lateness_us"]).get_total_count() == counted
    assert answer["counted_s"] == pytest.approx(duration_s - settle_s)
    assert len(httpx.get(f"{stalling}/recorded").json()) == len(offsets)  # all were sent


def test_wrong_answers_are_counted_by_reason_without_a_latency(
    stalling: str, generator: OpenLoopGenerator
) -> None:
    missing = Request("GET", "/missing")
    answer = generator.run(
        OpenWindow(f"{stalling}/missing", missing, 50, 0.5, seed=1, process="constant")
    )
    reason = missing.problem(404, b"not found")
    assert reason == "status 404"
    assert answer["counted"] == 25
    assert answer["failures"] == {reason: 25}
    assert answer["completed"] == 0
    assert decoded(answer["latency_us"]).get_total_count() == 0
    assert decoded(answer["lateness_us"]).get_total_count() == 25  # sent all the same


def test_a_beside_load_is_sent_on_its_own_schedule_and_counted_apart(
    stalling: str, trivial: str, generator: OpenLoopGenerator
) -> None:
    beside = BesideLoad(f"{stalling}/record", RECORD, rate=30, seed=5)
    expected = len(arrival_offsets(30, 1.0, seed=5, process="poisson"))
    httpx.get(f"{stalling}/recorded")
    answer = generator.run(
        OpenWindow(f"{trivial}/", TRIVIAL, 40, 1.0, seed=3, process="constant", beside=beside)
    )
    # The window's own figures hold its own requests only.
    assert (answer["scheduled"], answer["counted"], answer["completed"]) == (40, 40, 40)
    assert decoded(answer["latency_us"]).get_total_count() == 40
    assert answer["beside"]["sent"] == answer["beside"]["completed"] == expected
    assert answer["beside"]["seed"] == 5
    assert answer["beside"]["failures"] == {}
    assert decoded(answer["beside"]["latency_us"]).get_total_count() == expected
    assert len(httpx.get(f"{stalling}/recorded").json()) == expected  # all reached it

    # Beside a closed window too; a wrong answer beside is a failure of the beside load's.
    missing = BesideLoad(f"{stalling}/missing", Request("GET", "/missing"), rate=30, seed=5)
    answer = generator.run(
        ClosedWindow(f"{trivial}/", TRIVIAL, duration_s=1.0, connections=1, beside=missing)
    )
    assert answer["failures"] == {}
    assert answer["beside"]["failures"] == {"status 404": expected}
    assert answer["beside"]["completed"] == 0
    without = generator.run(OpenWindow(f"{trivial}/", TRIVIAL, 20, 0.5, seed=1))
    assert "beside" not in without


def test_a_beside_load_never_shares_the_windows_connections() -> None:
    async def pools() -> tuple[bool, bool]:
        generator = Generator()
        try:
            url = "http://127.0.0.1:1/"
            window = generator.session(url, 8, False, "window")
            beside = generator.session(url, 8, False, "beside")
            return window is beside, window is generator.session(url, 8, False, "window")
        finally:
            await generator.close()

    assert asyncio.run(pools()) == (False, True)


def test_a_window_that_fails_takes_its_beside_load_with_it(trivial: str) -> None:
    """A window the generator refuses (here: a rate of 0) cancels the beside load it started:
    nothing of it is left to send into the next window."""

    async def refused() -> tuple[str, set[asyncio.Task[Any]]]:
        generator = Generator()
        beside = BesideLoad(f"{trivial}/", TRIVIAL, rate=50, seed=1)
        window = OpenWindow(f"{trivial}/", TRIVIAL, 0, 2.0, seed=1, beside=beside)
        try:
            with pytest.raises(ValueError) as caught:
                await generator.run(window.command())
            left = {task for task in asyncio.all_tasks() if task is not asyncio.current_task()}
            return str(caught.value), left
        finally:
            await generator.close()

    message, left = asyncio.run(refused())
    assert "must be positive" in message
    assert left == set()


def test_a_closed_port_is_counted_as_failures_and_the_generator_goes_on(
    trivial: str, tmp_path: Path
) -> None:
    port = free_port()  # nothing listens there
    with OpenLoopGenerator(tmp_path / "generator.log") as alone:
        answer = alone.run(
            OpenWindow(f"http://127.0.0.1:{port}/", ROOT, 20, 0.5, seed=1, process="constant")
        )
        assert answer["completed"] == 0
        assert sum(answer["failures"].values()) == answer["counted"] == 10
        [reason] = answer["failures"]
        assert reason.startswith("ClientConnectorError") and str(port) in reason
        # A window it refuses is an error of its own, and it still answers the next one.
        with pytest.raises(LabError, match="refused a window.*must be positive"):
            alone.run(OpenWindow(f"{trivial}/", TRIVIAL, 0, 0.5, seed=1))
        answer = alone.run(OpenWindow(f"{trivial}/", TRIVIAL, 20, 0.5, seed=1, process="constant"))
        assert answer["failures"] == {}
        assert answer["completed"] == 10
        assert alone.process is not None and alone.process.poll() is None


def test_the_generator_leaves_no_process_behind(trivial: str, tmp_path: Path) -> None:
    with OpenLoopGenerator(tmp_path / "generator.log") as started:
        assert started.process is not None
        pid = started.process.pid
        assert psutil.pid_exists(pid)
        answer = started.run(
            OpenWindow(f"{trivial}/", TRIVIAL, 20, 0.2, seed=1, process="constant")
        )
        assert answer["completed"] == 4
    assert not psutil.pid_exists(pid)

    with pytest.raises(RuntimeError, match="the block failed"):
        with OpenLoopGenerator(tmp_path / "generator.log") as started:
            assert started.process is not None
            pid = started.process.pid
            started.run(OpenWindow(f"{trivial}/", TRIVIAL, 20, 0.2, seed=1, process="constant"))
            raise RuntimeError("the block failed")
    assert not psutil.pid_exists(pid)
    assert pid not in {child.pid for child in psutil.Process().children(recursive=True)}


# The arrival times (arrivals.py), without a server.


def test_constant_arrivals_are_evenly_spaced() -> None:
    offsets = arrival_offsets(50, 1.0, seed=0, process="constant")
    assert len(offsets) == 50
    assert offsets == [index / 50 for index in range(50)]
    assert [b - a for a, b in zip(offsets, offsets[1:], strict=False)] == pytest.approx([0.02] * 49)
    assert offsets == arrival_offsets(50, 1.0, seed=99, process="constant")  # no randomness


def test_poisson_arrivals_follow_their_seed() -> None:
    first = arrival_offsets(100, 5.0, seed=11, process="poisson")
    assert first == arrival_offsets(100, 5.0, seed=11, process="poisson")
    assert first != arrival_offsets(100, 5.0, seed=12, process="poisson")


def test_poisson_arrivals_have_exponential_gaps_of_the_right_mean() -> None:
    rate, duration_s = 1000.0, 20.0
    offsets = arrival_offsets(rate, duration_s, seed=5, process="poisson")
    assert all(0 <= offset < duration_s for offset in offsets)
    assert offsets == sorted(offsets)
    # ~20,000 arrivals: their count is within 5 standard deviations (sqrt(20,000) = 141).
    assert abs(len(offsets) - rate * duration_s) < 5 * (rate * duration_s) ** 0.5
    gaps = [offsets[0]] + [b - a for a, b in zip(offsets, offsets[1:], strict=False)]
    mean = statistics.fmean(gaps)
    assert mean == pytest.approx(1 / rate, rel=0.03)
    # Exponential, not evenly spaced: their spread is their mean.
    assert statistics.stdev(gaps) / mean == pytest.approx(1.0, abs=0.05)


@pytest.mark.parametrize(("rate", "duration_s"), [(0, 1.0), (10, 0), (-5, 1.0)])
def test_arrivals_need_a_positive_rate_and_duration(rate: float, duration_s: float) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        arrival_offsets(rate, duration_s, seed=0, process="poisson")
