"""The latency mode's settings: the paired protocol's ports, arms and pinning, with its own
timetable (longer windows than the throughput modes': a tail needs samples) and its rates."""

from dataclasses import dataclass

from loadtest.analysis.stats import MIN_PAIRS_FOR_CI
from loadtest.load.open_loop.arrivals import Process
from loadtest.load.settings import PairedLoadSettings

LATENCY_APPS = ("v1", "v2")
# The paired rates, as fractions of the baseline arm's capacity (measured first).
FRACTIONS = (0.25, 0.5, 0.75, 0.9)
QUICK_ROUNDS = 6  # the fewest with a 95% interval
QUICK_WINDOW_S = 1.5


@dataclass(frozen=True)
class LatencySettings(PairedLoadSettings):
    apps: tuple[str, ...] = LATENCY_APPS
    scenarios: tuple[str, ...] = ("read",)
    fractions: tuple[float, ...] = FRACTIONS
    # Absolute rates (r/s) in place of the fractions, when given.
    rates: tuple[float, ...] = ()
    # Rounds per rate, each one window per arm, alternating which goes first (an even number:
    # each arm first as often): 14 rounds of 3 s windows are 42 s per arm and rate.
    pairs: int = 14
    window_s: float = 3.0
    # The start of each window, sent but not counted: the arm's connections are reopened in it,
    # and the previous arm's last answers leave the CPU.
    settle_s: float = 0.25
    warmup_s: float = 2.0  # per arm, at the lowest rate, before the rounds; not counted
    process: Process = "poisson"
    connections: int = 64  # the cap on requests in flight, per arm
    # The closed-loop capacity measurement: `users` requests in flight, `capacity_rounds`
    # rounds of one `capacity_window_s` window per arm.
    users: int = 10
    capacity_rounds: int = 4
    capacity_window_s: float = 2.0
    # After the paired rates: one rate between the arms' capacities and one past them all,
    # `overload_rounds` windows per arm each, drained between windows: 6, the fewest that give
    # the knee (which reads the overload rates too) its interval.
    overload: bool = True
    overload_rounds: int = MIN_PAIRS_FOR_CI
    httperf: bool = False  # the independent check with httperf, at the paired rate nearest 50%
    seed: int = 2026
    dataset_size: int = 10_000  # posts in the database, as in the benchmark
