"""What a paired run loads: a plan of arms and scenarios (the lab's READ, READ synthetic and
WRITE; the ladder's rungs; the sweep's cells), and per schedule slot the request its windows
send, which one locust user (locustfiles/paired_user.py) reads from a plan file."""

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from loadtest.lab.arms import baseline_of, comparisons

# In a scenario's body, the arm's name: each arm writes rows of its own, so the rows an arm
# stored can be counted against the writes it acknowledged while the arms share a table.
ARM_PLACEHOLDER = "{arm}"
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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Scenario:
    """A request every arm of a plan is loaded with, and its name and label in reports."""

    name: str
    label: str
    request: Request  # its body may name the arm (ARM_PLACEHOLDER)

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
    """The arms a paired mode loads, the scenarios it loads them with, and the ratios it
    reports: each arm over the baseline, and the extra comparisons its arms declare."""

    arms: tuple[str, ...]
    scenarios: tuple[Scenario, ...]
    baseline: str | None
    comparisons: tuple[tuple[str, str], ...]  # (arm, reference)

    def scenario(self, name: str) -> Scenario:
        for scenario in self.scenarios:
            if scenario.name == name:
                return scenario
        raise KeyError(f"the plan has no scenario {name!r}")


def plan_lab_arms(arms: tuple[str, ...], scenarios: tuple[Scenario, ...]) -> PairedPlan:
    """The plan for arms of the lab's registry (commons/arms.py): v1 is the baseline."""
    return PairedPlan(arms, scenarios, baseline_of(arms), tuple(comparisons(arms)))


@dataclass(frozen=True)
class SlotLoad:
    """One slot's entry in a plan file: its request, and how many users of each locust process
    take part (the others idle through its windows; None: all). The sweep, which sets it, runs
    one process."""

    request: Request
    users: int | None = None


def write_slot_loads(path: Path, loads: dict[str, SlotLoad]) -> None:
    path.write_text(
        json.dumps(
            {
                slot: {"request": load.request.as_dict(), "users": load.users}
                for slot, load in loads.items()
            },
            indent=1,
        )
    )


def read_slot_loads(path: Path) -> dict[str, SlotLoad]:
    return {
        slot: SlotLoad(Request(**entry["request"]), entry["users"])
        for slot, entry in json.loads(path.read_text()).items()
    }
