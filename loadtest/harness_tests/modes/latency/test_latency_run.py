"""`./test.sh latency` run for real with the shortest timetable that takes every step of a
paired rate (v1 and v2, one rate of six 1 s rounds; the overload stage sends the same windows
at other rates, planned in test_rates.py), on the mixed load's `async def` scenario, which goes
through every step READ does and sends pages of 1,000 posts beside its windows: results.json,
the same arrivals for both arms of a round, the large answers asked beside them, the ratios and
knees, the collections, the reports, the rebuild; the refusal of a
rate the generator cannot hold; one-line option errors; nothing left running after success,
refusal or Ctrl-C."""

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from harness_tests.runner import (
    interrupted_run,
    lab_processes,
    leftover_processes,
    only_run,
    port_options,
    run_in_process,
    run_runner,
)
from loadtest.load.open_loop.histograms import decoded
from loadtest.modes.latency import runner as latency_runner

SHORTEST = [
    "latency",
    "--scenarios",
    "async-mixed",
    "--fractions",
    "0.5",
    "--rounds",
    "6",
    "--window",
    "1",
    "--no-overload",
]


def alone_unless_root(test: Callable[..., None]) -> Callable[..., None]:
    """A latency run stops if its generator does not hold its first rate (250 r/s, 99% of the
    requests sent within 2 ms of their due time). As root the generator runs under the
    real-time policy, which other tests on the machine cannot delay (load/open_loop/client.py);
    otherwise the run waits for the serial pass."""
    return test if os.geteuid() == 0 else pytest.mark.alone(test)


@alone_unless_root
def test_a_real_latency_run_pairs_the_arms_and_reports_their_tails(tmp_path: Path) -> None:
    """The run's shape, not its figures: every stage, window and histogram where it belongs
    (the figures' arithmetic is tested on fixed answers in test_rates.py and
    analysis/test_latency.py)."""
    before = lab_processes()
    result = run_runner(*SHORTEST, *port_options(), "--results-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert leftover_processes(before) == {}
    run_dir = only_run(tmp_path)
    assert run_dir.name.endswith("-latency")
    results = json.loads((run_dir / "results.json").read_text())
    assert results["kind"] == "latency"
    limits = results["generator"]
    assert limits["ceiling_rps"] is not None and limits["steps"]

    read = results["scenarios"]["async-mixed"]
    assert read["beside"] == {
        "path": "/async/posts?per_page=1000",
        "rps": 4.0,
        "label": "a page of 1,000 posts",
    }
    capacities = read["capacities"]
    assert set(capacities) == {"v1", "v2"} and all(rps > 0 for rps in capacities.values())
    assert [rate["stage"] for rate in read["rates"].values()] == ["paired"]
    paired_50 = next(iter(read["rates"].values()))
    assert paired_50["rps"] == pytest.approx(0.5 * capacities["v1"], abs=0.1)

    windows = read["windows"]
    paired = [window for window in windows if window["stage"] == "paired"]
    assert len(paired) == 6 * 2  # rounds × arms
    for rate in ("50%",):
        for round_ in range(6):
            pair = [w for w in paired if w["rate"] == rate and w["round"] == round_]
            # Both arms of a round were sent the same arrivals, and took turns going first.
            assert {w["arm"] for w in pair} == {"v1", "v2"}
            assert len({w["seed"] for w in pair}) == 1
            assert len({w["scheduled"] for w in pair}) == 1
            first = next(w["arm"] for w in pair if w["position"] == 0)
            assert first == ("v1" if round_ % 2 == 0 else "v2")
    for window in windows:
        assert window["counted"] > 0
        latency = decoded(window["latency_us"])
        assert latency.get_total_count() == window["completed"] > 0
        assert len(window["gc"]["collections"]) == 3
        # The large answers were asked beside every window, all answered, and counted apart.
        beside = window["beside"]
        assert beside["completed"] == beside["sent"] and beside["failures"] == {}
        assert decoded(beside["latency_us"]).get_total_count() == beside["sent"]
    # The same large answers beside both arms of a round, not the small requests' arrivals.
    for round_ in range(6):
        pair = [w for w in paired if w["round"] == round_]
        assert len({(w["beside"]["seed"], w["beside"]["sent"]) for w in pair}) == 1
        assert pair[0]["beside"]["seed"] != pair[0]["seed"]
    assert sum(window["beside"]["sent"] for window in windows) > 0

    for rate in read["rates"].values():
        for arm in ("v1", "v2"):
            found = rate["arms"][arm]
            assert found["samples"] == sum(
                w["completed"] for w in windows if w["rate"] == rate["label"] and w["arm"] == arm
            )
            assert found["p50"]["ms"] <= found["p90"]["ms"] <= found["p99"]["ms"]
            assert found["p99"]["ms"] <= found["p99.9"]["ms"] <= found["max_ms"] + 0.01
            assert found["beside"]["sent"] == sum(
                w["beside"]["sent"]
                for w in windows
                if w["rate"] == rate["label"] and w["arm"] == arm
            )
    ratio = paired_50["ratios"]["v2_over_v1"]["p50"]
    assert ratio["pairs"] == 6 and ratio["ci95_low"] <= ratio["estimate"] <= ratio["ci95_high"]
    assert set(read["knees"]) == {"v1", "v2"}

    assert "one post beside pages of 1,000 (async def): over the baseline" in result.stdout
    assert (run_dir / "latency.svg").read_text().count("<svg") == 1
    report = (run_dir / "report.md").read_text()
    assert "knee, v2" in report
    assert "a page of 1,000 posts asked at 4 r/s throughout" in report
    (run_dir / "report.md").unlink()
    rebuilt = run_in_process("report", str(run_dir), "--results-dir", str(tmp_path))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "Beside the tail" in (run_dir / "report.md").read_text()


# What the generator held on a near-free endpoint, as measure_generator answers: fixed here, so
# the refusal does not depend on what else the machine runs (the real measurement is the real
# run's, above; the refusal's wording on every kind of answer is test_rates.py's).
HELD_UP_TO_2000 = {
    "ceiling_rps": 2000,
    "ceiling_is_a_floor": False,
    "late_limit_ms": 2.0,
    "steps": [
        {"rate": 2000, "held": True, "why_not": None},
        {"rate": 4000, "held": False, "why_not": "1% of requests started more than 3.10 ms late"},
    ],
}


def test_a_rate_the_generator_cannot_hold_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rate past what the generator held is refused in one line before any arm or database
    starts: the generator process and the near-free server are started and stopped for real;
    only their measurement's answer is fixed."""
    monkeypatch.setattr(latency_runner, "measure_generator", lambda *_: dict(HELD_UP_TO_2000))
    before = lab_processes()
    results_dir = tmp_path / "results"
    result = run_in_process(
        "latency", "--rates", "100,1000000", *port_options(), "--results-dir", str(results_dir)
    )
    assert result.returncode == 1
    line = result.stderr.strip().splitlines()[-1]  # after the progress lines
    assert line == (
        "./test.sh: error: --rates: 1,000,000 r/s is past what the load generator holds on this "
        "machine: 2000 r/s on a near-free endpoint (4000 r/s failed: 1% of requests started more "
        "than 3.10 ms late); refusing it rather than measuring a closed loop"
    ), line
    assert "capacity" not in result.stdout + result.stderr  # no arm was started
    assert leftover_processes(before) == {}
    assert not results_dir.exists()  # nothing measured: no run folder, no results/


def test_ctrl_c_mid_run_stops_the_generator_and_the_arms(tmp_path: Path) -> None:
    before = lab_processes()
    returncode, stderr = interrupted_run(
        "latency",
        *port_options(),
        "--results-dir",
        str(tmp_path),
        once_started="commons.probes.gc_pauses:app",  # an arm, inside the collection probe
    )
    assert returncode == 130
    assert "Traceback" not in stderr
    assert leftover_processes(before) == {}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--fractions", "0"], "0: a fraction of the capacity must be above 0 and at most 1"),
        (["--fractions", "0.5,half"], "'half' is not a number"),
        (["--fractions", "0.5,0.5"], "names a value twice"),
        (["--rates", "-5"], "a rate must be above 0"),
        (["--rounds", "3"], "3 is below 6"),
        (["--window", "0.2"], "between 1 and 60 seconds"),
        (["--arrivals", "bursty"], "invalid choice: 'bursty'"),
        (["--scenarios", "read,delete"], "choose from read, synthetic, write"),
    ],
)
def test_latency_option_errors_are_one_line(arguments: list[str], message: str) -> None:
    result = run_in_process("latency", *arguments)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
