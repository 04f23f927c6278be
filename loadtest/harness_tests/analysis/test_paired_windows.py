"""The one pairing rule (issue 47): an empty window is no pair, on either side, in every paired
mode's path (the benchmark's rounds and repeats, the ladder's and the cells' groups)."""

from loadtest.analysis.flags import window_flags
from loadtest.analysis.paired_windows import by_group, ratios_by_repeat, served_rps, window_ratios
from loadtest.analysis.ratio import paired_ratios
from loadtest.load.windows import WindowRecord


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
