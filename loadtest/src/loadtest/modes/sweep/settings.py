"""The sweep's settings: the paired protocol's, with the sweep's cells and timetable."""

from dataclasses import dataclass

from commons.payloads import DEFAULT_COMMENTS_PER_POST
from loadtest.load.settings import PairedLoadSettings

# Scenario -> what it sends; reads answer `size` posts, writes send them.
SHAPES = {
    "flat": "GET /payloads/flat?items=N: N posts built in memory (READ synthetic's posts)",
    "nested": "GET /payloads/nested?items=N&comments=C: N posts, each with its author and C "
    "comments (depth 2)",
    "bulk": "POST /posts_bulk: N posts validated and inserted in one transaction",
    "validate": "POST /payloads/validate: the same N posts validated, nothing stored",
}
SHAPE_NAMES = tuple(SHAPES)
READ_SHAPES = ("flat", "nested")
READ_SIZES = (1, 10, 100, 1000, 5000)
WRITE_SIZES = (1, 10, 100, 1000)
QUICK_SIZES = (1, 1000)
# 6 rounds: the fewest with a 95% interval.
QUICK_PAIRS = 6


@dataclass(frozen=True)
class SweepSettings(PairedLoadSettings):
    shapes: tuple[str, ...] = SHAPE_NAMES
    # None: each shape's own sizes (READ_SIZES, WRITE_SIZES); else these, where a shape takes
    # them (a write takes at most MAX_BULK_POSTS).
    sizes: tuple[int, ...] | None = None
    comments: int = DEFAULT_COMMENTS_PER_POST  # per post, in the nested shape
    # Rounds: in each, every cell gives every arm one window. Nine are the fewest whose 95%
    # interval leaves out the extreme pairs (the 2nd to the 8th), and keep the default run
    # under ten minutes on the 2-vCPU machines (the largest cells' windows last seconds).
    pairs: int = 9
    # One warm-up window per app (its first cell), not counted: verification has already
    # sent every cell's request to every arm.
    warmup_s: float = 1.0
    # `users` caps the users of a cell; window_s and settle_s are the smallest window and
    # settle time: the timetable (timetable.py) lengthens both for slow requests.
