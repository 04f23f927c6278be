"""Which rates a latency run offers: the paired rates from the baseline's capacity or --rates,
the overload rates last, and the refusal of a rate past the generator's ceiling."""

from dataclasses import replace

import pytest

from harness_tests.runner import run_in_process
from loadtest.lab.errors import LabError
from loadtest.modes.latency.rates import plan_rates, refusal, refuse_asked_rates
from loadtest.modes.latency.settings import LatencySettings

CAPACITIES = {"v1": 200.0, "v2": 400.0}


def test_the_paired_rates_are_fractions_of_the_baseline_and_the_overload_rates_come_last() -> None:
    planned = plan_rates(LatencySettings(), CAPACITIES, "v1")
    assert [(rate.label, rate.rps, rate.stage) for rate in planned] == [
        ("25%", 50.0, "paired"),
        ("50%", 100.0, "paired"),
        ("75%", 150.0, "paired"),
        ("90%", 180.0, "paired"),
        ("141%", 282.8, "overload"),  # between the capacities: their geometric mean
        ("220%", 440.0, "overload"),  # 10% past the fastest arm's
    ]


def test_no_rate_between_capacities_that_are_too_close() -> None:
    planned = plan_rates(LatencySettings(), {"v1": 200.0, "v2": 230.0}, "v1")
    assert [rate.rps for rate in planned if rate.stage == "overload"] == [253.0]


def test_asked_rates_at_or_past_the_baseline_capacity_run_with_the_overload_rates() -> None:
    settings = replace(LatencySettings(), rates=(300.0, 50.0, 200.0), overload=False)
    planned = plan_rates(settings, CAPACITIES, "v1")
    assert [(rate.rps, rate.stage) for rate in planned] == [
        (50.0, "paired"),
        (200.0, "overload"),
        (300.0, "overload"),
    ]


LIMITS = {
    "ceiling_rps": 2000,
    "ceiling_is_a_floor": False,
    "steps": [
        {"rate": 2000, "held": True, "why_not": None},
        {"rate": 4000, "held": False, "why_not": "1% of requests started more than 3.10 ms late"},
    ],
}


def test_a_rate_past_the_ceiling_is_refused_with_the_step_that_failed() -> None:
    assert refusal(2000, LIMITS) is None
    reason = refusal(2500, LIMITS)
    assert reason == (
        "2,500 r/s is past what the load generator holds on this machine: 2000 r/s on a "
        "near-free endpoint (4000 r/s failed: 1% of requests started more than 3.10 ms late)"
    )
    with pytest.raises(LabError, match="refusing it rather than measuring a closed loop"):
        refuse_asked_rates((100.0, 2500.0), LIMITS)


def test_a_generator_that_holds_nothing_stops_the_run() -> None:
    limits = {
        "ceiling_rps": None,
        "ceiling_is_a_floor": False,
        "steps": [{"rate": 250, "held": False, "why_not": "12 requests failed"}],
    }
    with pytest.raises(LabError, match="did not hold even 250 r/s .*12 requests failed"):
        refuse_asked_rates((), limits)


def test_httperf_without_read_synthetic_is_one_line() -> None:
    result = run_in_process("latency", "--httperf")
    assert result.returncode == 1
    assert result.stderr.strip().endswith(
        "--httperf: the httperf check runs on READ synthetic, where no database shares the load "
        "CPU httperf keeps busy; add it: --scenarios read,synthetic"
    )
    assert "\n" not in result.stderr.strip()


def test_fractions_and_rates_exclude_each_other() -> None:
    result = run_in_process("latency", "--fractions", "0.5", "--rates", "100")
    assert result.returncode == 2
    assert "not allowed with argument" in result.stderr
