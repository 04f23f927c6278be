"""The open-loop generator's own process (`python -m loadtest.load.open_loop.generator`, started
and driven by client.py): one command per line on stdin, one JSON answer per line on stdout.

An open window sends each request at its due time (arrivals.py) whether or not earlier ones have
been answered, and counts its latency from that due time, so a stall is charged to every request
that should have gone out during it (coordinated omission corrected, as wrk2 does). The due
times are kept by a thread that sleeps with the clock's microsecond precision (the event loop's
own timers wake up to a millisecond late) and hands each request to the event loop; how late
each one really started is recorded too: the generator's own scheduling error. Requests in
flight are capped by the connections per server; one that finds them all busy waits for one, its
latency still counted from its due time. A closed window (the capacity measurement) keeps a
fixed number of requests in flight, back to back."""

import asyncio
import gc
import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from loadtest.load.open_loop.arrivals import arrival_offsets
from loadtest.load.open_loop.histograms import encoded, new_histogram, record_us
from loadtest.load.plan import JSON_HEADERS, Request

# The schedule starts this long after the command arrives: time to start the scheduling thread.
LEAD_S = 0.02
# Python switches threads every 5 ms by default: the scheduling thread, woken at a due time,
# would wait that long for the interpreter whenever the event loop is busy parsing an answer.
SWITCH_INTERVAL_S = 0.0002
UNFINISHED = "unfinished when the drain bound ran out"
# An idle connection is closed by the client after this long: below uvicorn's 5 s keep-alive,
# so the server never closes one under a request being sent on it.
KEEPALIVE_S = 4.5


def keep_schedule(
    loop: asyncio.AbstractEventLoop,
    offsets: list[float],
    start: float,
    fire: Callable[[float], None],
    finished: asyncio.Event,
) -> None:
    """The scheduling thread: sleep until each due time, then hand the request to the loop."""
    for offset in offsets:
        due = start + offset
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        loop.call_soon_threadsafe(fire, due)
    loop.call_soon_threadsafe(finished.set)


@dataclass(frozen=True)
class Target:
    request: Request
    url: str
    session: aiohttp.ClientSession
    body: bytes | None


class Generator:
    """The generator's state between commands: one pool of connections per server, kept open
    across windows while idle less than KEEPALIVE_S (past it, the next window's first requests,
    in its settling time, open them again)."""

    def __init__(self) -> None:
        self.sessions: dict[tuple[str, int, bool, str], aiohttp.ClientSession] = {}

    def session(
        self, url: str, connections: int, close_each: bool, pool: str
    ) -> aiohttp.ClientSession:
        """The connections to `url`'s server for `pool` ("window", or "beside": a window's beside
        load never shares its connections, whatever their caps)."""
        parts = urlsplit(url)
        key = (parts.netloc, connections, close_each, pool)
        if key not in self.sessions:
            # A connection per request (httperf's way, for the check against it), or kept
            # open while idle less than KEEPALIVE_S.
            connector = (
                aiohttp.TCPConnector(limit=connections, force_close=True)
                if close_each
                else aiohttp.TCPConnector(limit=connections, keepalive_timeout=KEEPALIVE_S)
            )
            self.sessions[key] = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
                # What locust's FastHttpUser sends is no more than this; no compression either way.
                skip_auto_headers=("Accept-Encoding",),
            )
        return self.sessions[key]

    async def close(self) -> None:
        for session in self.sessions.values():
            await session.close()

    def target(self, command: dict[str, Any], pool: str = "window") -> Target:
        """What every request of a window sends, and where: read once, not per request."""
        request = Request.from_dict(command["request"])
        return Target(
            request,
            command["url"],
            self.session(
                command["url"], command["connections"], command.get("close_each", False), pool
            ),
            request.body.encode() if request.body is not None else None,
        )

    async def send(self, target: Target) -> tuple[str | None, float]:
        """One request and the cheap check of its answer: (what is wrong or None, when it
        ended)."""
        request = target.request
        try:
            async with target.session.request(
                request.method,
                target.url,
                data=target.body,
                headers=JSON_HEADERS if target.body is not None else None,
                # A redirect is the answer, checked like any other status: following it would
                # send load where no file named (issue 53).
                allow_redirects=False,
            ) as response:
                content = await response.read()
                problem = request.problem(response.status, content)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - any failure is a failed request, by its name
            problem = f"{type(error).__name__}: {error}".strip(": ")
        return problem, time.perf_counter()

    async def open_window(self, command: dict[str, Any]) -> dict[str, Any]:
        offsets = arrival_offsets(
            command["rate"],
            command["duration_s"],
            seed=command["seed"],
            process=command["process"],
        )
        connections = command["connections"]
        target = self.target(command)
        loop = asyncio.get_running_loop()
        latency, lateness = new_histogram(), new_histogram()
        failures: Counter[str] = Counter()
        tasks: set[asyncio.Task[None]] = set()
        state = {"in_flight": 0, "waited": 0, "counted": 0, "served": 0, "last_end": 0.0}
        counted_tasks: set[asyncio.Task[None]] = set()
        start = time.perf_counter() + LEAD_S
        count_from = start + command["settle_s"]
        end = start + command["duration_s"]

        async def request(due: float, counted: bool) -> None:
            # How late the request started: the scheduling thread's wake-up, the hand-over to
            # the loop and the loop's turn to run it (the write itself follows at once, or
            # after a wait for a free connection, which is counted apart).
            if counted:
                record_us(lateness, time.perf_counter() - due)
            try:
                problem, ended = await self.send(target)
            finally:
                state["in_flight"] -= 1
            state["last_end"] = max(state["last_end"], time.perf_counter())
            # Served: every answer that came back right in the counted span, whenever it was
            # due (past capacity, those due in the settling time are answered in the span).
            if problem is None and count_from <= ended <= end:
                state["served"] += 1
            if not counted:
                return
            if problem is not None:
                failures[problem] += 1
            else:
                record_us(latency, ended - due)

        def fire(due: float) -> None:
            counted = due >= count_from
            if counted:
                state["counted"] += 1
                if state["in_flight"] >= connections:
                    state["waited"] += 1
            # Counted here, not when the task first runs: several due times can fire in one
            # turn of the loop.
            state["in_flight"] += 1
            task = loop.create_task(request(due, counted))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            if counted:
                counted_tasks.add(task)

        scheduled = asyncio.Event()
        thread = threading.Thread(
            target=keep_schedule, args=(loop, offsets, start, fire, scheduled), daemon=True
        )
        thread.start()
        await scheduled.wait()
        unfinished = await drained(tasks, counted_tasks, command["drain_s"])
        if unfinished:
            failures[UNFINISHED] += unfinished
        thread.join()
        counted_s = end - count_from
        return {
            "scheduled": len(offsets),
            "counted": state["counted"],
            "completed": latency.get_total_count(),
            "failures": dict(failures),
            "waited_for_connection": state["waited"],
            "counted_s": counted_s,
            "served_rps": state["served"] / counted_s if counted_s > 0 else None,
            "drain_s": max(0.0, state["last_end"] - end),
            "latency_us": encoded(latency),
            "lateness_us": encoded(lateness),
        }

    async def closed_window(self, command: dict[str, Any]) -> dict[str, Any]:
        """`connections` requests in flight, each sent as the one before it is answered: the
        server's capacity, with latency counted from each send."""
        latency = new_histogram()
        failures: Counter[str] = Counter()
        target = self.target(command)
        start = time.perf_counter()
        count_from = start + command["settle_s"]
        end = start + command["duration_s"]

        async def user() -> None:
            while (sent := time.perf_counter()) < end:
                problem, ended = await self.send(target)
                if sent < count_from or ended > end:
                    continue
                if problem is not None:
                    failures[problem] += 1
                else:
                    record_us(latency, ended - sent)

        users = [asyncio.ensure_future(user()) for _ in range(command["connections"])]
        # A server that stops answering must not hold the run: what is still out after the
        # drain bound is a failure.
        _, left = await asyncio.wait(users, timeout=command["duration_s"] + command["drain_s"])
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left)
            failures[UNFINISHED] += len(left)
        counted_s = end - count_from
        return {
            "completed": latency.get_total_count(),
            "failures": dict(failures),
            "served_rps": latency.get_total_count() / counted_s if counted_s > 0 else None,
            "latency_us": encoded(latency),
        }

    async def run_beside(
        self, beside: dict[str, Any], start: float, duration_s: float, drain_s: float
    ) -> dict[str, Any]:
        """A window's beside load (client.py's BesideLoad): requests due on a Poisson schedule
        of their own for `duration_s` from `start`, on connections of their own, each answer
        checked and its latency counted from its send, apart from the window's."""
        offsets = arrival_offsets(
            beside["rate"], duration_s, seed=beside["seed"], process="poisson"
        )
        target = self.target(beside, pool="beside")
        latency = new_histogram()
        failures: Counter[str] = Counter()
        tasks: set[asyncio.Task[None]] = set()

        async def request() -> None:
            sent = time.perf_counter()
            problem, ended = await self.send(target)
            if problem is None:
                record_us(latency, ended - sent)
            else:
                failures[problem] += 1

        try:
            # Their timing is the load's, not a measurement: the event loop's own timers do.
            for offset in offsets:
                delay = start + offset - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                task = asyncio.ensure_future(request())
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            unfinished = await drained(tasks, set(tasks), drain_s)
        finally:  # cancelled with its window: nothing of it goes on into the next one
            for task in set(tasks):
                task.cancel()
        if unfinished:
            failures[UNFINISHED] += unfinished
        return {
            "seed": beside["seed"],
            "sent": len(offsets),
            "completed": latency.get_total_count(),
            "failures": dict(failures),
            "latency_us": encoded(latency),
        }

    async def run(self, command: dict[str, Any]) -> dict[str, Any]:
        # The generator's own collections would stop its scheduling thread mid-window (a full
        # one takes milliseconds) and be counted against the server: none run in a window;
        # what a window left is collected after it.
        gc.disable()
        beside = None
        try:
            if command["op"] not in ("open", "closed"):
                raise ValueError(f"unknown command {command['op']!r}")
            if command.get("beside"):
                beside = asyncio.ensure_future(
                    self.run_beside(
                        command["beside"],
                        time.perf_counter() + LEAD_S,
                        command["duration_s"],
                        command["drain_s"],
                    )
                )
            if command["op"] == "open":
                figures = await self.open_window(command)
            else:
                figures = await self.closed_window(command)
            if beside is not None:
                figures["beside"] = await beside
            return figures
        finally:
            if beside is not None and not beside.done():  # the window failed
                beside.cancel()
                await asyncio.wait([beside])
            gc.enable()
            gc.collect()


async def serve() -> None:
    loop = asyncio.get_running_loop()
    generator = Generator()
    try:
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            try:
                answer = await generator.run(json.loads(line))
            except (ValueError, KeyError, TypeError) as error:
                answer = {"error": f"{type(error).__name__}: {error}"}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    finally:
        await generator.close()


async def drained(
    tasks: set[asyncio.Task[None]], counted_tasks: set[asyncio.Task[None]], drain_s: float
) -> int:
    """Wait up to `drain_s` for the requests still in flight, cancel the rest: how many of
    those were counted (each an unfinished request)."""
    if not tasks:
        return 0
    _, left = await asyncio.wait(set(tasks), timeout=drain_s)
    for task in left:
        task.cancel()
    if left:
        await asyncio.wait(left)
    return len(left & counted_tasks)


def main() -> None:
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    asyncio.run(serve())


if __name__ == "__main__":
    main()
