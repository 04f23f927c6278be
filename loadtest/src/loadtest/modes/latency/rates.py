"""Which rates a latency run offers: first the load generator's own limit (the highest rate it
holds on a near-free endpoint, and its scheduling error), then, from the arms' measured
capacities, the paired rates (fractions of the baseline arm's capacity, or the rates asked for)
and the overload rates; a rate the generator cannot hold is refused, never run as something
else."""

import math
from dataclasses import asdict, dataclass
from typing import Any

from loadtest.analysis.limits import LATE_LIMIT_MS
from loadtest.lab.errors import LabError
from loadtest.load.open_loop.client import OpenLoopGenerator, OpenWindow
from loadtest.load.open_loop.histograms import decoded, max_ms, percentile_ms
from loadtest.load.plan import Request
from loadtest.modes.latency.settings import LatencySettings

# Tried in turn against the near-free endpoint until one is not held.
CEILING_STEPS = (250, 500, 1000, 2000, 4000, 8000)
CEILING_WINDOW_S = 1.5
CEILING_SETTLE_S = 0.25
# A rate is held when the answers keep up with the requests actually sent, none failed, none
# waited for a connection, and 99% of requests started within LATE_LIMIT_MS of their due time.
SERVED_SHARE = 0.97
TRIVIAL_REQUEST = Request("GET", "/", prefix='{"posts":[]}')
# Connections the generator may use against the near-free endpoint: its limit is its own, not
# that of --connections (a small cap there is the arms' concern, flagged where it bites).
CEILING_CONNECTIONS = 256
# A step that falls short is tried once more before it counts: one hiccup of the shared machine
# would otherwise lower the ceiling for the whole run.
CEILING_TRIES = 2
# The overload stage's first rate sits between the capacities when the faster arm's is at
# least this much above the baseline's; its second is this far past the fastest arm's.
DISTINCT_CAPACITIES = 1.2
PAST_CAPACITY = 1.1


def lateness_ms(answer: dict[str, Any]) -> dict[str, float | None]:
    late = decoded(answer["lateness_us"])
    return {
        "p50": percentile_ms(late, 50),
        "p99": percentile_ms(late, 99),
        "max": max_ms(late),
    }


def ceiling_seconds() -> float:
    """The limit stage's duration at most (the warm-up, every step tried twice), for the
    progress line."""
    return 1.0 + len(CEILING_STEPS) * CEILING_TRIES * CEILING_WINDOW_S


def why_not_held(answer: dict[str, Any], window_s: float) -> str | None:
    sent_rps = answer["counted"] / window_s
    late = lateness_ms(answer)
    if answer["failures"]:
        return f"{sum(answer['failures'].values())} requests failed"
    if answer["waited_for_connection"]:
        return f"{answer['waited_for_connection']} requests waited for a connection"
    if answer["served_rps"] < SERVED_SHARE * sent_rps:
        return f"answers came back at {answer['served_rps']:.0f} r/s of {sent_rps:.0f} sent"
    if late["p99"] is not None and late["p99"] > LATE_LIMIT_MS:
        return f"1% of requests started more than {late['p99']:.2f} ms late"
    return None


def measure_generator(
    generator: OpenLoopGenerator, url: str, settings: LatencySettings
) -> dict[str, Any]:
    """The generator's limits against the near-free endpoint at `url`: each step's figures,
    the highest rate held (its ceiling; None if not even the first), and at the first step its
    scheduling error and the latency floor of the whole path."""
    # Not counted: the generator's first connections and its first requests through the code.
    generator.run(
        OpenWindow(
            f"{url}/",
            TRIVIAL_REQUEST,
            CEILING_STEPS[0],
            1.0,
            seed=settings.seed,
            connections=CEILING_CONNECTIONS,
        )
    )
    steps = []
    for rate in CEILING_STEPS:
        for _ in range(CEILING_TRIES):
            step = ceiling_step(generator, url, rate, settings)
            if step["held"]:
                break
        steps.append(step)
        if not step["held"]:
            break
    held = [step["rate"] for step in steps if step["held"]]
    return {
        "ceiling_rps": max(held) if held else None,
        "ceiling_is_a_floor": len(held) == len(CEILING_STEPS),
        "late_limit_ms": LATE_LIMIT_MS,
        "steps": steps,
    }


def ceiling_step(
    generator: OpenLoopGenerator, url: str, rate: float, settings: LatencySettings
) -> dict[str, Any]:
    answer = generator.run(
        OpenWindow(
            f"{url}/",
            TRIVIAL_REQUEST,
            rate,
            CEILING_WINDOW_S,
            seed=settings.seed,
            process=settings.process,
            settle_s=CEILING_SETTLE_S,
            connections=CEILING_CONNECTIONS,
        )
    )
    latency = decoded(answer["latency_us"])
    problem = why_not_held(answer, CEILING_WINDOW_S - CEILING_SETTLE_S)
    return {
        "rate": rate,
        "held": problem is None,
        "why_not": problem,
        "served_rps": round(answer["served_rps"], 1),
        "lateness_ms": lateness_ms(answer),
        "latency_ms": {"p50": percentile_ms(latency, 50), "p99": percentile_ms(latency, 99)},
    }


def rate_text(rate: float) -> str:
    """`1,000,000`, `182.5`: a rate as a reader writes it."""
    return f"{rate:,.1f}".removesuffix(".0")


def refusal(rate: float, limits: dict[str, Any]) -> str | None:
    """Why the generator cannot be trusted with `rate`; None if it can."""
    ceiling = limits["ceiling_rps"]
    if ceiling is None:
        first = limits["steps"][0]
        return (
            f"the load generator did not hold even {first['rate']} r/s on a near-free endpoint "
            f"({first['why_not']})"
        )
    if rate > ceiling and not limits["ceiling_is_a_floor"]:
        failed = limits["steps"][-1]
        return (
            f"{rate_text(rate)} r/s is past what the load generator holds on this machine: "
            f"{ceiling} r/s on a near-free endpoint ({failed['rate']} r/s failed: "
            f"{failed['why_not']})"
        )
    if rate > ceiling:
        return (
            f"{rate_text(rate)} r/s is past the highest rate the load generator was tried at "
            f"({ceiling} r/s, which it held)"
        )
    return None


def refuse_asked_rates(rates: tuple[float, ...], limits: dict[str, Any]) -> None:
    """A generator that holds no rate, or a rate asked for with --rates that it cannot hold,
    stops the run in one line before any arm starts."""
    if limits["ceiling_rps"] is None:
        raise LabError(f"{refusal(0, limits)}: no latency it measured could be trusted")
    for rate in rates:
        reason = refusal(rate, limits)
        if reason is not None:
            raise LabError(f"--rates: {reason}; refusing it rather than measuring a closed loop")


@dataclass(frozen=True)
class PlannedRate:
    label: str  # as tables and the chart name it: "50%" (of the baseline's capacity) or "180 r/s"
    rps: float
    stage: str  # "paired" (rounds of windows alternating between arms) or "overload" (last)
    why: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_rates(
    settings: LatencySettings, capacities: dict[str, float], baseline: str
) -> list[PlannedRate]:
    """The paired rates (ascending), then the overload rates."""
    base = capacities[baseline]
    if settings.rates:
        # A rate at or past the baseline's capacity is an overload rate, run last, as the
        # derived ones are.
        paired = [
            PlannedRate(
                f"{rate_text(rate)} r/s",
                rate,
                "paired" if rate < base else "overload",
                "asked for with --rates"
                + ("" if rate < base else f", at or past {baseline}'s capacity"),
            )
            for rate in sorted(settings.rates)
        ]
    else:
        paired = [
            PlannedRate(
                f"{fraction:.0%}",
                round(fraction * base, 1),
                "paired",
                f"{fraction:.0%} of {baseline}'s capacity",
            )
            for fraction in sorted(settings.fractions)
        ]
    paired.sort(key=lambda rate: rate.stage == "overload")  # stable: ascending within a stage
    if not settings.overload:
        return paired
    fastest_arm = max(capacities, key=capacities.__getitem__)
    fastest = capacities[fastest_arm]
    overload = []
    if fastest >= DISTINCT_CAPACITIES * base:
        between = round(math.sqrt(base * fastest), 1)
        overload.append(
            PlannedRate(
                f"{between / base:.0%}",
                between,
                "overload",
                f"between {baseline}'s capacity and {fastest_arm}'s: {baseline} saturates, "
                f"{fastest_arm} does not",
            )
        )
    past = round(PAST_CAPACITY * fastest, 1)
    overload.append(
        PlannedRate(
            f"{past / base:.0%}",
            past,
            "overload",
            f"{PAST_CAPACITY - 1:.0%} past the fastest arm's capacity ({fastest_arm}): every arm "
            "saturates",
        )
    )
    return paired + overload
