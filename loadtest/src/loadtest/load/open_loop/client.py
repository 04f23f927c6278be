"""The harness's side of the open-loop generator: start its process (pinned where the load
generator goes), send it windows one at a time, read each window's figures back."""

import json
import os
import select
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from loadtest.lab.errors import LabError
from loadtest.lab.processes import stop_process
from loadtest.load.open_loop.arrivals import Process
from loadtest.load.plan import Request

# How long a window may go on after its last due time while its answers come in (past an
# arm's capacity, its queue); whatever is still out then is counted as a failure.
DRAIN_S = 30.0
# Beyond a window's duration and drain bound, how long the harness waits for the generator's
# answer before it takes the generator for hung.
ANSWER_GRACE_S = 60.0
# The generator shares its CPU with PostgreSQL: at an ordinary priority, a request due while a
# query runs waits for the CPU (1% of requests went out 4-12 ms late at 90% of v1's READ
# capacity on a 2-vCPU VM), and that wait is counted against the server. Under the real-time
# round-robin policy (root only) it preempts the database at once (p99 0.2-0.3 ms), and the
# database's own wait for the CPU is counted, as it should be: it is the service's. The kernel
# keeps 5% of each second for everything else, whatever a real-time process does.
REALTIME_PRIORITY = 1


@dataclass(frozen=True)
class BesideLoad:
    """Requests sent beside a window's own for its whole duration, due at `rate` a second of
    their own (Poisson, from `seed`) on connections of their own: the large answers of the
    latency mode's mixed load. Their answers are checked and counted apart, never in the
    window's latency."""

    url: str
    request: Request
    rate: float
    seed: int
    connections: int = 8


@dataclass(frozen=True)
class OpenWindow:
    """Requests due at `rate` a second (Poisson or evenly spaced, from `seed`) for
    `duration_s`, the first `settle_s` of them sent but not counted."""

    url: str
    request: Request
    rate: float
    duration_s: float
    seed: int
    process: Process = "poisson"
    settle_s: float = 0.0
    connections: int = 64  # the cap on requests in flight
    drain_s: float = DRAIN_S
    close_each: bool = False  # a new connection per request, closed after its answer
    beside: BesideLoad | None = None

    def command(self) -> dict[str, Any]:
        return {"op": "open", **asdict(self), "request": self.request.as_dict()}


@dataclass(frozen=True)
class ClosedWindow:
    """`connections` requests in flight, back to back, for `duration_s` (the first `settle_s`
    not counted): what the server can serve."""

    url: str
    request: Request
    duration_s: float
    connections: int = 10
    settle_s: float = 0.0
    drain_s: float = DRAIN_S
    beside: BesideLoad | None = None

    def command(self) -> dict[str, Any]:
        return {"op": "closed", **asdict(self), "request": self.request.as_dict()}


class OpenLoopGenerator:
    """The generator's process, from `with` to its end (stopped whatever happened)."""

    def __init__(self, log_path: Path, cpus: tuple[int, ...] | None = None) -> None:
        self.log_path = log_path
        self.cpus = cpus
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> "OpenLoopGenerator":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        cpus = self.cpus

        def pin() -> None:
            if cpus:
                os.sched_setaffinity(0, cpus)
            try:
                os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(REALTIME_PRIORITY))
            except PermissionError:
                pass  # not root: it keeps the ordinary priority, and its lateness says so

        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "loadtest.load.open_loop.generator"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,  # Ctrl-C reaches the runner, which stops it
                close_fds=True,
                preexec_fn=pin,
            )
        return self

    @property
    def priority(self) -> str:
        """The scheduling policy it runs under, in words, for the results."""
        assert self.process is not None
        try:
            realtime = os.sched_getscheduler(self.process.pid) == os.SCHED_RR
        except OSError:
            return "unknown"
        return "real-time (SCHED_RR)" if realtime else "ordinary (not root: no real-time policy)"

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.process is not None:
            if self.process.stdin is not None:
                try:
                    self.process.stdin.close()
                except BrokenPipeError:
                    pass
            stop_process(self.process, timeout_s=5)

    def run(self, window: OpenWindow | ClosedWindow) -> dict[str, Any]:
        """Send one window and wait for its figures (a window takes its duration, then drains)."""
        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write((json.dumps(window.command()) + "\n").encode())
            process.stdin.flush()
        except BrokenPipeError:
            raise LabError(f"the open-loop generator has exited: {self.last_log_line()}") from None
        bound_s = window.duration_s + window.drain_s + ANSWER_GRACE_S
        ready, _, _ = select.select([process.stdout], [], [], bound_s)
        if not ready:
            raise LabError(
                f"the open-loop generator did not answer within {bound_s:.0f} s of a "
                f"{window.duration_s:g} s window: {self.last_log_line()}"
            )
        line = process.stdout.readline()
        if not line:
            raise LabError(f"the open-loop generator has exited: {self.last_log_line()}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise LabError(f"the open-loop generator refused a window: {answer['error']}")
        return answer

    def last_log_line(self) -> str:
        lines = self.log_path.read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else "(nothing in its log)"
