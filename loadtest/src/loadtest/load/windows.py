"""The record of the paired protocol: one `WindowRecord` per measured window, built from
locust's per-name figures and the CPU read at the window's edges. Statistics and reports start
from these records, never from the runner's state."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from loadtest.load.histograms import merge_histograms, percentile_ms
from loadtest.load.schedule import MEASURED, Schedule, parse_request_name
from loadtest.load.slots import Slot


@dataclass(frozen=True)
class WindowCpu:
    """CPU seconds spent between the readings at a window's counted start and its end."""

    span_s: float  # wall time between the two readings
    app_cpu_s: float | None
    db_cpu_s: float | None  # the embedded PostgreSQL's process tree; None for an external one
    # The other arms' processes, which should be idle: CPU here means the previous window's
    # requests were still running in the counted span (the settle time was too short for them).
    other_arms_cpu_s: float | None = None
    # Everything else on the app's CPUs (pinned runs only): other programs, another benchmark.
    foreign_cpu_s: float | None = None


@dataclass
class NameTally:
    requests: int = 0
    failures: int = 0
    histogram: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class WindowRecord:
    repeat: int  # 1-based
    scenario: str
    slot: str  # the arm, or the arm and its variant (load/slots.py)
    window: int  # index in its scenario's schedule (warm-up windows included)
    round: int  # the round it is paired in, within its repeat
    started_at: float  # epoch seconds: start of the counted span
    duration_s: float
    requests: int  # requests started in the counted span (failures included)
    failures: int
    histogram: dict[int, int]  # response time (ms, locust's buckets) -> count
    app_cpu_s: float | None = None
    db_cpu_s: float | None = None
    cpu_span_s: float | None = None
    other_arms_cpu_s: float | None = None
    foreign_cpu_s: float | None = None
    app_cpu_capacity: float = 1.0  # CPUs the app can keep busy: min(its CPUs, its workers)

    @property
    def arm(self) -> str:
        return Slot.parse(self.slot).arm

    @property
    def variant(self) -> str | None:
        return Slot.parse(self.slot).variant

    @property
    def successes(self) -> int:
        return self.requests - self.failures

    @property
    def rps(self) -> float:
        """Successful requests per second: failures are flagged, never counted as throughput."""
        return self.successes / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def app_cpu_ms_per_request(self) -> float | None:
        return per_request_ms(self.app_cpu_s, self.cpu_span_s, self)

    @property
    def db_cpu_ms_per_request(self) -> float | None:
        return per_request_ms(self.db_cpu_s, self.cpu_span_s, self)

    @property
    def app_cpu_busy(self) -> float | None:
        """Share of the app's usable CPUs it kept busy (1.0: saturated)."""
        if self.app_cpu_s is None or not self.cpu_span_s:
            return None
        return self.app_cpu_s / (self.cpu_span_s * self.app_cpu_capacity)

    def as_dict(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "variant": self.variant,
            "scenario": self.scenario,
            "repeat": self.repeat,
            "window": self.window,
            "round": self.round,
            "started_at": round(self.started_at, 3),
            "duration_s": round(self.duration_s, 3),
            "requests": self.requests,
            "failures": self.failures,
            "rps": round(self.rps, 2),
            "app_cpu_s": rounded(self.app_cpu_s, 4),
            "db_cpu_s": rounded(self.db_cpu_s, 4),
            "cpu_span_s": rounded(self.cpu_span_s, 3),
            "other_arms_cpu_s": rounded(self.other_arms_cpu_s, 4),
            "foreign_cpu_s": rounded(self.foreign_cpu_s, 4),
            "app_cpu_ms_per_request": rounded(self.app_cpu_ms_per_request, 3),
            "db_cpu_ms_per_request": rounded(self.db_cpu_ms_per_request, 3),
            "app_cpu_busy": rounded(self.app_cpu_busy, 3),
            "p50_ms": percentile_ms(self.histogram, 0.50),
            "p95_ms": percentile_ms(self.histogram, 0.95),
            "p99_ms": percentile_ms(self.histogram, 0.99),
        }


def rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def per_request_ms(cpu_s: float | None, span_s: float | None, record: WindowRecord) -> float | None:
    """CPU per request: CPU seconds over the requests the span held (r/s x span)."""
    if cpu_s is None or not span_s or record.rps <= 0:
        return None
    return 1000 * cpu_s / (record.rps * span_s)


def tally_by_name(entries: Iterable[Mapping[str, Any]]) -> dict[tuple[str, int, str], NameTally]:
    """Locust's JSON stats entries grouped by (slot, window, phase); other names are ignored."""
    tallies: dict[tuple[str, int, str], NameTally] = {}
    for entry in entries:
        key = parse_request_name(entry["name"])
        if key is None:
            continue
        tally = tallies.setdefault(key, NameTally())
        tally.requests += entry["num_requests"]
        tally.failures += entry["num_failures"]
        histogram = {int(float(ms)): count for ms, count in entry["response_times"].items()}
        tally.histogram = merge_histograms([tally.histogram, histogram])
    return tallies


def per_slot(
    tallies: Mapping[tuple[str, int, str], NameTally], count: str, phase: str | None = None
) -> dict[str, int]:
    """Per slot, over every phase (or one): "successes" (the write check counts every
    acknowledged request, warm-up and settling included), "failures" or "requests"."""
    totals: dict[str, int] = {}
    for (slot, _, tally_phase), tally in tallies.items():
        if phase is not None and tally_phase != phase:
            continue
        value = {
            "successes": tally.requests - tally.failures,
            "failures": tally.failures,
            "requests": tally.requests,
        }[count]
        totals[slot] = totals.get(slot, 0) + value
    return totals


def build_window_records(
    *,
    schedule: Schedule,
    tallies: Mapping[tuple[str, int, str], NameTally],
    cpu: Mapping[int, WindowCpu],
    repeat: int,
    app_cpu_capacity: float,
) -> list[WindowRecord]:
    """One record per measured window of the schedule (an empty window counts zero requests)."""
    records = []
    for window in schedule.measured():
        tally = tallies.get((window.slot, window.index, MEASURED), NameTally())
        window_cpu = cpu.get(window.index)
        records.append(
            WindowRecord(
                repeat=repeat,
                scenario=schedule.scenario,
                slot=window.slot,
                window=window.index,
                round=window.round or 0,
                started_at=window.measure_start,
                duration_s=window.duration_s,
                requests=tally.requests,
                failures=tally.failures,
                histogram=tally.histogram,
                app_cpu_s=window_cpu.app_cpu_s if window_cpu else None,
                db_cpu_s=window_cpu.db_cpu_s if window_cpu else None,
                cpu_span_s=window_cpu.span_s if window_cpu else None,
                other_arms_cpu_s=window_cpu.other_arms_cpu_s if window_cpu else None,
                foreign_cpu_s=window_cpu.foreign_cpu_s if window_cpu else None,
                app_cpu_capacity=app_cpu_capacity,
            )
        )
    return records
