"""The paired protocol's timetable: which slot takes the load when, shared by every locust
process (a slot: an arm, or an arm and its variant, load/slots.py).

Per scenario, one locust run walks a schedule of short windows on the wall clock: first a
discarded warm-up window per slot, then rounds in which every slot has one window. Rounds
rotate the order (v1 v2 | v2 v1 | ... and, for three arms, a b c | b c a | c a b), so each
window has a window of every other slot within seconds and none always goes first. A ratio
is then formed per round, between windows that ran under nearly the same machine speed.

Requests are tagged by the window in which they *start* (`request_name`). The first
`settle_s` of every window is not counted: users still finishing the previous arm's request
switch over in that time, so what is counted is the new arm alone in a steady closed loop.
"""

import bisect
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from loadtest.lab.arms import rotations

WARMUP = "warmup"
SETTLE = "settle"
MEASURED = "measured"
NAME_SEPARATOR = " | "


@dataclass(frozen=True)
class Window:
    index: int
    slot: str
    kind: str  # WARMUP or MEASURED
    round: int | None  # measured windows: the round they are paired in
    start: float  # epoch seconds: the slot takes the load from here
    measure_start: float  # requests started from here on are counted
    end: float

    @property
    def duration_s(self) -> float:
        """The counted span: requests started in it, over its length, are the window's r/s."""
        return self.end - self.measure_start


@dataclass(frozen=True)
class Schedule:
    scenario: str
    hosts: dict[str, str]  # slot -> its arm's base URL
    windows: tuple[Window, ...]
    _starts: list[float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_starts", [window.start for window in self.windows])

    @property
    def start(self) -> float:
        return self.windows[0].start

    @property
    def end(self) -> float:
        return self.windows[-1].end

    def window_at(self, moment: float) -> Window | None:
        if not self.windows or moment < self.start or moment >= self.end:
            return None
        return self.windows[bisect.bisect_right(self._starts, moment) - 1]

    def measured(self) -> list[Window]:
        return [window for window in self.windows if window.kind == MEASURED]

    def to_json(self) -> str:
        return json.dumps(
            {
                "scenario": self.scenario,
                "hosts": self.hosts,
                "windows": [asdict(window) for window in self.windows],
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> "Schedule":
        data = json.loads(text)
        windows = tuple(Window(**window) for window in data["windows"])
        return cls(data["scenario"], dict(data["hosts"]), windows)

    @classmethod
    def read(cls, path: Path) -> "Schedule":
        return cls.from_json(path.read_text())


def build_schedule(
    *,
    scenario: str,
    hosts: dict[str, str],
    start: float,
    rounds: int,
    window_s: float,
    settle_s: float,
    warmup_s: float,
) -> Schedule:
    """Warm-up windows (one per slot, not counted), then `rounds` rounds of one window per
    slot."""
    return build_grouped_schedule(
        scenario=scenario,
        hosts=hosts,
        start=start,
        groups=rotations(tuple(hosts), rounds),
        window_s=window_s,
        settle_s=settle_s,
        warmup_s=warmup_s,
    )


def build_grouped_schedule(
    *,
    scenario: str,
    hosts: dict[str, str],
    start: float,
    groups: list[list[str]],
    window_s: float,
    settle_s: float,
    warmup_s: float,
) -> Schedule:
    """Warm-up windows in the first group's order (then any slot it lacks), then one window per
    slot of each group; a group's windows share its index as their `round`, the unit of pairing
    (build_schedule: a round of every slot; the ladder: a few slots around one rung)."""
    if not 0 <= settle_s < window_s:
        raise ValueError(f"settle time {settle_s}s must be shorter than the window ({window_s}s)")
    windows: list[Window] = []
    moment = start
    first = groups[0] if groups else []
    warmup_order = list(dict.fromkeys([*first, *hosts]))
    if warmup_s > 0:
        for slot in warmup_order:
            windows.append(
                Window(len(windows), slot, WARMUP, None, moment, moment, moment + warmup_s)
            )
            moment += warmup_s
    for round_, group_slots in enumerate(groups):
        for slot in group_slots:
            end = moment + window_s
            windows.append(
                Window(len(windows), slot, MEASURED, round_, moment, moment + settle_s, end)
            )
            moment = end
    return Schedule(scenario, dict(hosts), tuple(windows))


def request_name(window: Window, moment: float) -> str:
    """The locust request name for a request started at `moment` in `window`."""
    phase = window.kind
    if phase == MEASURED and moment < window.measure_start:
        phase = SETTLE
    return NAME_SEPARATOR.join((window.slot, str(window.index), phase))


def parse_request_name(name: str) -> tuple[str, int, str] | None:
    """(slot, window index, phase) from a name made by `request_name`; None for other names."""
    parts = name.split(NAME_SEPARATOR)
    if len(parts) != 3 or not parts[1].isdigit() or parts[2] not in (WARMUP, SETTLE, MEASURED):
        return None
    return parts[0], int(parts[1]), parts[2]
