"""Timing: every benchmark of a group calibrated, then timed once per round in an order that
rotates, so that each is compared with its baseline from the same round only."""

import math
import timeit
from collections.abc import Sequence
from typing import Any

from commons.probes.microbench.benchmark import Benchmark

# timeit switches the garbage collector off; `setup` runs after that, before the clock starts.
# The Pydantic paths and the decoders allocate thousands of objects per call, and collecting
# them is part of what they cost in an app.
KEEP_GC_ENABLED = "gc.enable()"


def autorange(timer: timeit.Timer, target_s: float) -> tuple[int, float]:
    """timeit's autorange (1, 2, 5, 10, 20, ... loops until one run lasts target_s), with a
    target of our own: Timer.autorange always aims at 0.2 s."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            number = step * scale
            elapsed = timer.timeit(number)
            if elapsed >= target_s:
                return number, elapsed
        scale *= 10


def calibrate(timer: timeit.Timer, min_time_s: float) -> int:
    """Loops per measurement so that one lasts about min_time_s: autorange to a fifth of it
    (which warms the call up too), then scaled; timeit's own 1-2-5 steps would overshoot by up
    to 2.5 times and make each round, and so each pair, longer."""
    number, _ = autorange(timer, min_time_s / 5)
    # The fastest of three: one slow run (a full garbage collection, the machine) would make
    # too few loops, and a measurement shorter than asked.
    fastest = min(timer.repeat(repeat=3, number=number))
    return max(1, math.ceil(number * min_time_s / fastest))


def rotated(items: Sequence[Benchmark], shift: int) -> list[Benchmark]:
    shift %= len(items)
    return [*items[shift:], *items[:shift]]


def time_group(
    benchmarks: Sequence[Benchmark], *, rounds: int, min_time_s: float, process: int
) -> list[dict[str, Any]]:
    """Calibrate every benchmark of the group, then time the rounds: per round each benchmark
    once, starting one place further on each round (and each process), so no benchmark always
    follows the same neighbour. The machine drifts by ±30% within seconds, so a benchmark is
    only ever compared with its baseline from the same round."""
    timers = {b.name: timeit.Timer(b.call, setup=KEEP_GC_ENABLED) for b in benchmarks}
    loops = {name: calibrate(timer, min_time_s) for name, timer in timers.items()}
    samples: dict[str, list[dict[str, float]]] = {b.name: [] for b in benchmarks}
    for round_number in range(rounds):
        for benchmark in rotated(benchmarks, round_number + process):
            number = loops[benchmark.name]
            elapsed = timers[benchmark.name].timeit(number)
            samples[benchmark.name].append(
                {"round": round_number, "seconds_per_call": elapsed / number}
            )
    return [
        {
            "group": b.group,
            "name": b.name,
            "label": b.label,
            "baseline": b.baseline,
            **b.details,
            "loops_per_measurement": loops[b.name],
            "samples": samples[b.name],
        }
        for b in benchmarks
    ]
