"""What a sweep's results say beyond the window figures: where a read curve crosses a
threshold, and which ratio a cell's gain is read from."""

from loadtest.analysis.cells import cell_ratios, gain
from loadtest.load.windows import WindowRecord
from loadtest.modes.sweep.cells import Cell
from loadtest.modes.sweep.results import crossing_bytes


def ratio(estimate: float, low: float, high: float) -> dict[str, float]:
    return {"estimate": estimate, "ci95_low": low, "ci95_high": high}


def test_a_crossing_is_interpolated_on_log_bytes() -> None:
    points = [(1_000, ratio(1.0, 0.9, 1.1)), (100_000, ratio(2.0, 1.8, 2.2))]
    # 1.5x is half-way from 1.0x to 2.0x: half-way from 1 KB to 100 KB on a log axis.
    assert crossing_bytes(points, 1.5, "estimate") == 10_000
    # The interval's upper bound reaches it sooner, its lower bound later.
    assert (
        crossing_bytes(points, 1.5, "ci95_high") < 10_000 < crossing_bytes(points, 1.5, "ci95_low")
    )
    assert crossing_bytes(points, 3.0, "estimate") is None  # never reached
    assert crossing_bytes([(1_000, ratio(2.0, 2, 2))] + points[1:], 1.5, "estimate") is None


def test_a_gain_is_read_from_cpu_where_the_load_generator_held_an_arm_back() -> None:
    ratios = {"rps": ratio(1.1, 1.0, 1.2), "cpu": ratio(1.4, 1.3, 1.5)}
    assert gain(ratios, load_bound=False) == {"by": "rps", **ratios["rps"]}
    assert gain(ratios, load_bound=True) == {"by": "cpu", **ratios["cpu"]}


def test_an_empty_window_makes_no_pair_on_either_side() -> None:
    def record(slot: str, round_: int, requests: int) -> WindowRecord:
        return WindowRecord(1, "sweep", slot, round_, round_, 0.0, 1.0, requests, 0, {})

    cell = Cell("flat", 1)
    records = [record("v1/flat-1", r, 100) for r in range(6)]
    records += [record("v2/flat-1", r, 0 if r == 0 else 200) for r in range(6)]
    ratio = cell_ratios(records, cell, "v2", "v1")["rps"]
    assert ratio["pairs"] == 5 and ratio["estimate"] == 2.0
