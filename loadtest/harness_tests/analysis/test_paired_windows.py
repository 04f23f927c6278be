"""The one pairing rule (issue 47): an empty window is no pair, on either side, in every paired
mode's path: the benchmark's (and compare's) rounds and repeats, the ladder's rungs, the sweep's
and the shapes mode's cells."""

from dataclasses import dataclass

from commons.ladder import BASE_RUNG
from loadtest.analysis.cells import cell_ratios
from loadtest.analysis.flags import window_flags
from loadtest.analysis.paired_windows import by_group, ratios_by_repeat, served_rps, window_ratios
from loadtest.analysis.ratio import paired_ratios
from loadtest.load.cells import cell_slot
from loadtest.load.windows import WindowRecord
from loadtest.modes.ladder.results import rung_slot, speedups_by_round
from loadtest.pipeline.results import cross_check_results


def window(slot: str, round_: int, requests: int, repeat: int = 1) -> WindowRecord:
    return WindowRecord(repeat, "read", slot, round_, round_, 0.0, 1.0, requests, 0, {})


# v2 served nothing in round 2, v1 nothing in round 3: only rounds 1 and 4 pair.
RECORDS = [
    window("v1", 1, 100),
    window("v2", 1, 200),
    window("v1", 2, 100),
    window("v2", 2, 0),
    window("v1", 3, 0),
    window("v2", 3, 200),
    window("v1", 4, 100),
    window("v2", 4, 300),
]


def test_an_empty_window_drops_its_pair_on_either_side() -> None:
    assert window_ratios(RECORDS, "read", "v2", "v1") == [2.0, 3.0]
    assert ratios_by_repeat(RECORDS, "read", "v2", "v1") == {1: [2.0, 3.0]}
    assert paired_ratios(
        by_group(RECORDS, "v2", served_rps), by_group(RECORDS, "v1", served_rps)
    ) == [2.0, 3.0]


def test_the_flag_says_the_pairs_are_left_out() -> None:
    [flag] = window_flags([record for record in RECORDS if record.slot == "v2"])
    assert flag.startswith("1 of 4 windows served no request (their pairs are left out)")


def as_slots(slot_of: dict[str, str]) -> list[WindowRecord]:
    """RECORDS with their slots renamed (v1 -> slot_of["v1"], ...): a mode's own slots."""
    return [
        WindowRecord(1, "read", slot_of[r.slot], r.round, r.round, 0.0, 1.0, r.requests, 0, {})
        for r in RECORDS
    ]


def test_the_ladder_pairs_by_the_rule() -> None:
    """A rung's speed-up over response_model, per round: the empty rounds are no speed-up."""
    records = as_slots({"v1": rung_slot("v2", BASE_RUNG), "v2": rung_slot("v2", "rung")})
    assert speedups_by_round(records, "v2", "rung", 1, "rps") == {1: 2.0, 4: 3.0}


@dataclass(frozen=True)
class Cell:
    name: str = "flat-100"
    size: int = 100


def test_the_cells_pair_by_the_rule() -> None:
    records = as_slots({"v1": cell_slot(Cell(), "v1"), "v2": cell_slot(Cell(), "v2")})
    ratio = cell_ratios(records, Cell(), "v2", "v1")["rps"]
    assert ratio["pairs"] == 2
    assert (ratio["pair_min"], ratio["pair_max"]) == (2.0, 3.0)


def test_the_wrk_cross_check_pairs_by_the_rule_and_says_so() -> None:
    figures, flags = cross_check_results(RECORDS, {}, "v1", "wrk", {"read": "READ"})
    assert figures["ratios_vs_baseline"]["read"]["v2"]["pairs"] == 2
    assert [flag.split(":")[0] for flag in flags] == ["READ v1 (wrk)", "READ v2 (wrk)"]
    assert all("served no request (their pairs are left out)" in flag for flag in flags)
