"""When an open-loop window's requests are due: seeded, so every arm of a round is sent the same
sequence."""

import random
from typing import Literal

Process = Literal["poisson", "constant"]
PROCESSES: tuple[Process, ...] = ("poisson", "constant")


def arrival_offsets(rate: float, duration_s: float, *, seed: int, process: Process) -> list[float]:
    """Seconds from the window's start at which each request is due, in [0, duration_s): a
    Poisson process (independent exponential gaps, what many independent clients add up to) or
    a constant interval (wrk2's)."""
    if rate <= 0 or duration_s <= 0:
        raise ValueError(f"a rate ({rate}) and a duration ({duration_s}) must be positive")
    if process == "constant":
        count = int(rate * duration_s)
        return [index / rate for index in range(count)]
    generator = random.Random(seed)
    offsets = []
    offset = generator.expovariate(rate)
    while offset < duration_s:
        offsets.append(offset)
        offset += generator.expovariate(rate)
    return offsets
