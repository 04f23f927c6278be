"""The shapes mode's settings: the paired protocol's, with the cells the run measures."""

from dataclasses import dataclass

from loadtest.load.settings import PairedLoadSettings
from loadtest.modes.shapes.app import MEMBERS

# 6 rounds: the fewest with a 95% interval.
QUICK_PAIRS = 6


@dataclass(frozen=True)
class ShapesSettings(PairedLoadSettings):
    members: tuple[int, ...] = (MEMBERS[0], MEMBERS[-1])  # unions of 2 and 20 (5: on request)
    union_sizes: tuple[int, ...] = (100, 1000)  # members answered by the union reads
    validate_sizes: tuple[int, ...] = (1000,)  # members sent to the union bodies
    tree_depths: tuple[int, ...] = (8,)  # levels of the tree (255 nodes at 8)
    row_sizes: tuple[int, ...] = (1, 100)  # rows the parse_obj_as cells validate
    # Rounds: in each, every cell gives every arm one window. Nine leave out the extreme
    # pairs from the 95% interval (as the sweep's) and keep the default run under ten minutes.
    pairs: int = 9
    # One warm-up window per app (its first cell), not counted: verification has already
    # sent every cell's request to every arm.
    warmup_s: float = 1.0


QUICK = ShapesSettings(
    pairs=QUICK_PAIRS, union_sizes=(100,), validate_sizes=(100,), tree_depths=(6,)
)
