"""What a real run's ratios must hold, read from its own windows. The tests that run beside
others (scripts/run_tests.sh) may see a short window stalled empty by the machine; the harness
then leaves its pair out, on either side, and flags it (analysis/paired_windows.py), and these
tests ask exactly that, not that every window served."""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

Window = Mapping[str, Any]  # a window as results.json writes it


def slot_of(window: Window) -> str:
    """The window's slot: its arm, and the variant after a slash where it has one."""
    variant = window.get("variant")
    return window["arm"] if variant is None else f"{window['arm']}/{variant}"


def served(window: Window) -> int:
    return window["requests"] - window["failures"]


def pairs_expected(
    windows: Iterable[Window],
    slot: str,
    reference: str,
    *,
    scenario: str | None = None,
    repeat: int | None = None,
    round_of: Callable[[int], int] = lambda round_: round_,
) -> int:
    """The pairs a ratio of `slot` over `reference` holds: the rounds where both have a window
    and both served a request. `round_of`:
    the round a window's own pairs by (the shapes mode pairs two cells' groups of one round)."""
    chosen = [
        window
        for window in windows
        if (scenario is None or window["scenario"] == scenario)
        and (repeat is None or window["repeat"] == repeat)
    ]

    def by_round(name: str) -> dict[tuple[int, int], int]:
        return {
            (window["repeat"], round_of(window["round"])): served(window)
            for window in chosen
            if slot_of(window) == name
        }

    own, other = by_round(slot), by_round(reference)
    return sum(1 for key in own.keys() & other.keys() if other[key] > 0 and own[key] > 0)


def empty_windows(windows: Iterable[Window]) -> list[Window]:
    return [window for window in windows if served(window) == 0]
