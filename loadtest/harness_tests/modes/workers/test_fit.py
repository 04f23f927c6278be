"""The fit: a line through the tree's memory against the worker count, N = 1 left out, and the
workers that fit in a limit, for any limit (the check's too)."""

from typing import Any

import pytest

from loadtest.modes.workers.fit import best_choice, fit_of, line_through, workers_in
from loadtest.modes.workers.settings import Target


def samples(memory: dict[int, list[float]]) -> dict[int, list[dict[str, Any]]]:
    return {n: [{"pss_collected_mib": value} for value in values] for n, values in memory.items()}


def test_the_line_goes_through_the_counts_of_two_and_more() -> None:
    # uvicorn: N = 1 is one process (60); 2 and 4 are a supervisor (20) and 50 a worker.
    fit = fit_of("v1", "uvicorn", samples({1: [60.0], 2: [120.0], 4: [220.0]}), (512, 1024))
    assert fit["per_worker_mib"] == pytest.approx(50.0)
    assert fit["intercept_mib"] == pytest.approx(20.0)
    assert fit["workers_in"] == {"512": 9, "1024": 20}  # (512 - 20) / 50 = 9.84
    assert fit["points"] == {"1": 60.0, "2": 120.0, "4": 220.0}


def test_medians_of_the_rounds_make_the_points() -> None:
    fit = fit_of("v2", "gunicorn", samples({2: [100.0, 101.0, 130.0], 4: [140.0] * 3}), (512,))
    assert fit["points"] == {"2": 101.0, "4": 140.0}
    assert fit["per_worker_mib"] == pytest.approx(19.5)


@pytest.mark.parametrize(
    ("memory", "why"),
    [
        ({1: [60.0], 2: [120.0]}, "no fit: it needs two worker counts of 2 or more"),
        ({2: [120.0], 4: [None]}, "no fit: a tree of 4 workers did not finish every round"),
        ({2: [120.0], 4: []}, "no fit: a tree of 4 workers did not finish every round"),
        (
            {2: [120.0], 4: [100.0]},
            "no fit: memory falls as workers are added (-10.0 MiB a worker)",
        ),
    ],
)
def test_no_fit_says_why(memory: dict[int, list[Any]], why: str) -> None:
    fit = fit_of("v1", "uvicorn", samples(memory), (512,))
    assert fit["why"] == why
    assert fit["per_worker_mib"] is None and fit["workers_in"] == {"512": None}


def test_the_best_server_is_read_off_its_line_at_any_limit() -> None:
    fits = {
        "v1 uvicorn": fit_of("v1", "uvicorn", samples({2: [120.0], 4: [220.0]}), (512,)),
        "v1 gunicorn-preload": fit_of(
            "v1", "gunicorn-preload", samples({2: [80.0], 4: [120.0]}), (512,)
        ),
        "v2 uvicorn": fit_of("v2", "uvicorn", samples({2: [100.0], 4: [140.0]}), (512,)),
    }
    # 768 MiB is not among the limits the fits were read at: the line still answers.
    assert best_choice(fits, "v1", 768) == ("gunicorn-preload", 36)  # (768 - 40) / 20 = 36.4
    assert best_choice(fits, "v1", 512) == ("gunicorn-preload", 23)
    assert best_choice(fits, "v2-latest", 512) is None
    assert workers_in(30, 40.0, 20.0) == 0
    assert line_through({2: 1.0}) is None


def test_a_target_is_named_without_saying_its_shape_twice() -> None:
    assert Target().name == "100 models"
    assert Target("chain", 100).name == "chain 100 models"
    assert Target("union", 20).name == "20 union members"
    assert Target(lab=True).name == "lab"
