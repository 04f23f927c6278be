"""What a paired run loads: a plan of arms and scenarios (the lab's READ, READ synthetic and
WRITE; the ladder's rungs; the sweep's cells), and per schedule slot the request its windows
send, which one locust user (locustfiles/paired_user.py) reads from a plan file."""

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from loadtest.lab.apps import lab_service
from loadtest.lab.arms import arm_named, baseline_of, comparisons
from loadtest.lab.dataset import needs_related_rows
from loadtest.lab.files import write_text_safely
from loadtest.lab.services import Service

# In a scenario's body, the arm's name: each arm writes rows of its own, so the rows an arm
# stored can be counted against the writes it acknowledged while the arms share a table.
ARM_PLACEHOLDER = "{arm}"
# In a scenario's body, a number unique to each request (of every run), so writes that must not
# collide (a unique title, a key) do not: locustfiles/checked.py fills it in.
COUNTER_PLACEHOLDER = "{n}"
# Sent with every JSON body (what locust sends with `json=`).
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}


@dataclass(frozen=True)
class Request:
    """What a slot's windows send, and the cheap check every answer gets under load, so the
    load generator stays far from being the limit (the verification before timing checks
    answers in full): the status, how the body starts, how often a marker occurs in it (one
    per item of a list), or the whole body."""

    method: str
    path: str
    body: str | None = None  # JSON text
    status: int = 200
    prefix: str = ""
    marker: str | None = None
    count: int | None = None  # how often `marker` occurs in a right answer
    item: str = "item"  # what a marker marks, in the failure's words
    exact: str | None = None  # the whole of a right answer
    # Sent besides JSON_HEADERS (which go with a body), as (name, value) pairs.
    headers: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if (self.marker is None) != (self.count is None):
            raise ValueError("a marker needs its count, and a count its marker")

    def problem(self, status: int, content: bytes) -> str | None:
        """What is wrong with an answer, by the cheap checks; None if nothing."""
        if status != self.status:
            return f"status {status}"
        if not content.startswith(self.prefix.encode()):
            return f"the body does not start with {self.prefix}"
        if self.marker is not None and content.count(self.marker.encode()) != self.count:
            return f"expected {self.count} {self.item}s"
        if self.exact is not None and content != self.exact.encode():
            return f"expected {self.exact}"
        return None

    @property
    def numbered(self) -> bool:
        """Whether each request fills in its own number (COUNTER_PLACEHOLDER)."""
        return self.body is not None and COUNTER_PLACEHOLDER in self.body

    def header_dict(self) -> dict[str, str] | None:
        """What goes with the request: JSON_HEADERS with a body, then the scenario's own."""
        headers = {**(JSON_HEADERS if self.body is not None else {}), **dict(self.headers)}
        return headers or None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, entry: dict[str, Any]) -> "Request":
        fields = dict(entry)
        headers = tuple((name, value) for name, value in fields.pop("headers", ()))
        return cls(**fields, headers=headers)


@dataclass(frozen=True)
class ScenarioTimetable:
    """A scenario's own users and windows, for requests far slower than the benchmark's fixed
    timetable is made for (analysis/fit.py's declared_timetables); `why`, in words."""

    users: int
    window_s: float
    settle_s: float
    why: str


@dataclass(frozen=True)
class Scenario:
    """A request every arm of a plan is loaded with, and its name and label in reports."""

    name: str
    label: str
    request: Request  # its body may name the arm (ARM_PLACEHOLDER)
    # What the verification before timing asks of an answer besides the status: the JSON
    # fields it must have (dotted for nested ones), the fields whose value may differ between
    # arms (an id, a time of writing: compared by type only), and for a write the path its row
    # is read back on ("{field}" filled from the answer).
    fields: tuple[str, ...] = ()
    vary: tuple[str, ...] = ()
    read_back: str | None = None
    # The benchmark's timetable for it, where the run's own does not fit its requests (not
    # part of what it asks: a compare file's scenario sets its timetable in [options]).
    timetable: ScenarioTimetable | None = field(default=None, compare=False)

    @property
    def path(self) -> str:
        return self.request.path

    def request_for(self, arm: str) -> Request:
        body = self.request.body
        if body is None or ARM_PLACEHOLDER not in body:
            return self.request
        return replace(self.request, body=body.replace(ARM_PLACEHOLDER, arm))


@dataclass(frozen=True)
class PairedPlan:
    """The arms a paired mode loads, how each is started or reached, the scenarios it loads
    them with, and the ratios it reports: each arm over the baseline, and the extra
    comparisons its arms declare. The lab's modes fill it from the registry (plan_lab_arms),
    `compare` from a user's file (modes/compare/file.py): one structure, one path."""

    arms: tuple[str, ...]
    scenarios: tuple[Scenario, ...]
    baseline: str | None
    comparisons: tuple[tuple[str, str], ...]  # (arm, reference)
    services: tuple[Service, ...] = ()  # per arm, in the arms' order

    def service(self, arm: str) -> Service:
        for service in self.services:
            if service.name == arm:
                return service
        raise KeyError(f"the plan has no service {arm!r}")

    @property
    def reads_related_rows(self) -> bool:
        """Whether a scenario reads the posts' comments and tags: the dataset holds them then."""
        return needs_related_rows(scenario.path for scenario in self.scenarios)

    def scenario(self, name: str) -> Scenario:
        for scenario in self.scenarios:
            if scenario.name == name:
                return scenario
        raise KeyError(f"the plan has no scenario {name!r}")


def plan_lab_arms(
    arms: tuple[str, ...],
    scenarios: tuple[Scenario, ...],
    ports: dict[str, int] | None = None,
    workers: int = 1,
) -> PairedPlan:
    """The plan for arms of the lab's registry (commons/arms.py): v1 is the baseline; each arm
    started on its port (`ports`, or its default) with `workers` uvicorn workers."""
    services = tuple(
        lab_service(arm, (ports or {}).get(arm, arm_named(arm).port), workers) for arm in arms
    )
    return PairedPlan(arms, scenarios, baseline_of(arms), tuple(comparisons(arms)), services)


@dataclass(frozen=True)
class SlotLoad:
    """One slot's entry in a plan file: its request, and how many users of each locust process
    take part (the others idle through its windows; None: all). The sweep, which sets it, runs
    one process."""

    request: Request
    users: int | None = None


def write_slot_loads(path: Path, loads: dict[str, SlotLoad]) -> None:
    write_text_safely(
        path,
        json.dumps(
            {
                slot: {"request": load.request.as_dict(), "users": load.users}
                for slot, load in loads.items()
            },
            indent=1,
        ),
    )


def read_slot_loads(path: Path) -> dict[str, SlotLoad]:
    return {
        slot: SlotLoad(Request.from_dict(entry["request"]), entry["users"])
        for slot, entry in json.loads(path.read_text()).items()
    }
