"""The latency mode's mixed load (modes/latency/mixed.py), in-process: what each mixed scenario
asks and asks beside it, the same beside load for every arm of a round, and the large answers'
figures summed, reported and flagged (the real run is test_latency_run.py's)."""

from typing import Any

import pytest

from commons.routes import MAX_PER_PAGE
from loadtest.lab.errors import LabError
from loadtest.load.open_loop.histograms import encoded, new_histogram, record_us
from loadtest.load.scenarios import SCENARIOS
from loadtest.modes.latency.mixed import (
    BESIDE,
    BESIDE_RPS,
    LARGE_PER_PAGE,
    LATENCY_SCENARIO_NAMES,
    MIXED_SCENARIOS,
    beside_for,
)
from loadtest.modes.latency.report import beside_text, context_table
from loadtest.modes.latency.results import beside_figures, scenario_flags
from loadtest.modes.latency.runner import refuse_failed_beside


def beside_window(seconds: list[float], sent: int, failures: dict[str, int]) -> dict[str, Any]:
    histogram = new_histogram()
    for value in seconds:
        record_us(histogram, value)
    return {
        "sent": sent,
        "completed": len(seconds),
        "failures": failures,
        "latency_us": encoded(histogram),
    }


def test_each_mixed_scenario_reads_one_post_beside_pages_of_its_own_kind_of_route() -> None:
    assert MIXED_SCENARIOS["mixed"].path == "/posts/1"
    assert BESIDE["mixed"].scenario.path == "/posts?per_page=1000"
    assert MIXED_SCENARIOS["async-mixed"].path == "/async/posts/1"
    assert BESIDE["async-mixed"].scenario.path == "/async/posts?per_page=1000"
    # The routes' largest page, kept apart so the command line does not import FastAPI.
    assert BESIDE["mixed"].scenario.request.count == LARGE_PER_PAGE == MAX_PER_PAGE
    # The latency mode offers them after the lab's own; the benchmark does not (no beside load).
    assert LATENCY_SCENARIO_NAMES == (*SCENARIOS, "mixed", "async-mixed")
    assert not set(MIXED_SCENARIOS) & set(SCENARIOS)


def test_every_arm_of_a_round_gets_the_same_beside_load_at_its_own_address() -> None:
    v1 = beside_for("async-mixed", "http://127.0.0.1:8001", seed=2030)
    v2 = beside_for("async-mixed", "http://127.0.0.1:8002", seed=2030)
    assert v1 is not None and v2 is not None
    assert v1.url == "http://127.0.0.1:8001/async/posts?per_page=1000"
    assert v2.url == "http://127.0.0.1:8002/async/posts?per_page=1000"
    assert (v1.seed, v1.rate) == (v2.seed, v2.rate)
    assert v1.rate == BESIDE_RPS
    assert v1.seed != 2030  # not the small requests' own arrivals
    assert beside_for("read", "http://127.0.0.1:8001", seed=2030) is None


def test_the_large_answers_are_summed_over_an_arms_windows() -> None:
    windows = [
        {"beside": beside_window([0.05, 0.07], 3, {"status 500": 1})},
        {"beside": beside_window([0.09], 1, {})},
    ]
    figures = beside_figures(windows)["beside"]
    assert (figures["sent"], figures["completed"]) == (4, 3)
    assert figures["failures"] == {"status 500": 1}
    assert 69 <= figures["p50_ms"] <= 71
    assert beside_text(figures) == "3 / 4, 70.0 (1 failed)"
    assert beside_figures([{"latency_us": ""}]) == {}  # not a mixed scenario: nothing


def arm(beside: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "app_cpu_busy": 0.5,
        "gc": {"collections": [1, 0, 0], "pause_ms": [0.1, 0, 0], "longest_ms": [0.1, 0, 0]},
        "lateness_ms": {"p50": 0.1, "p99": 0.4},
        "windows_behind": 0,
        "windows": 6,
        "waited_for_connection": 0,
        "failures": {},
        **({"beside": beside} if beside else {}),
    }


def test_failed_large_answers_are_flagged_and_shown_beside_the_tail() -> None:
    beside = {"sent": 24, "completed": 21, "failures": {"status 503": 3}, "p50_ms": 80.0}
    scenario = {
        "label": "one post beside pages of 1,000 (def)",
        "beside": {"path": "/posts?per_page=1000", "rps": 4.0, "label": "a page of 1,000 posts"},
        "refused": [],
        "rates": {
            "50 r/s": {
                "label": "50 r/s",
                "rps": 50.0,
                "stage": "paired",
                "arms": {
                    "v1": arm(beside),
                    "v2": arm({**beside, "completed": 24, "failures": {}}),
                },
                "ratios": {},
            }
        },
    }
    [flag] = scenario_flags(scenario)
    assert flag.startswith("one post beside pages of 1,000 (def) at 50 r/s (50 r/s), v1: 3 large")
    assert "(most: status 503)" in flag
    header, rows = context_table(scenario)
    assert header[-1] == "large answers beside: answered / sent, p50 ms"
    assert [row[-1] for row in rows] == ["21 / 24, 80.0 (3 failed)", "24 / 24, 80.0"]
    del scenario["beside"]
    header, rows = context_table(scenario)
    assert "large answers beside: answered / sent, p50 ms" not in header


def test_a_failed_large_answer_in_the_capacity_stage_stops_the_run_in_one_line() -> None:
    refuse_failed_beside("READ", {"arm": "v1", "failures": {}})  # no beside load: nothing
    window = {"arm": "v2", "beside": {"failures": {"status 503": 2, "ReadTimeout": 1}}}
    with pytest.raises(LabError) as caught:
        refuse_failed_beside("one post beside pages of 1,000 (def)", window)
    assert str(caught.value) == (
        "one post beside pages of 1,000 (def): 3 large answers asked of v2 beside its capacity "
        "windows failed (status 503); see its log in the run folder"
    )
