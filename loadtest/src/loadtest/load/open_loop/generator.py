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
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from hdrh.histogram import HdrHistogram

from loadtest.load.open_loop.arrivals import arrival_offsets
from loadtest.load.plan import JSON_HEADERS, Request

# Latencies in microseconds, 1 µs to 10 minutes, to 3 significant digits (HdrHistogram's usual
# precision: a value is known within 0.1%).
LOWEST_US = 1
HIGHEST_US = 600_000_000
SIGNIFICANT_DIGITS = 3
# The schedule starts this long after the command arrives: time to start the scheduling thread.
LEAD_S = 0.02
# Python switches threads every 5 ms by default: the scheduling thread, woken at a due time,
# would wait that long for the interpreter whenever the event loop is busy parsing an answer.
SWITCH_INTERVAL_S = 0.0002
UNFINISHED = "unfinished when the drain bound ran out"


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)


def record_us(histogram: HdrHistogram, seconds: float) -> None:
    histogram.record_value(min(HIGHEST_US, max(LOWEST_US, round(seconds * 1_000_000))))


def encoded(histogram: HdrHistogram) -> str:
    return histogram.encode().decode("ascii")


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


class Generator:
    """The generator's state between commands: one pool of connections per server, kept open
    across windows so a window does not pay for the connections of the one before."""

    def __init__(self) -> None:
        self.sessions: dict[tuple[str, int], aiohttp.ClientSession] = {}

    def session(self, url: str, connections: int) -> aiohttp.ClientSession:
        parts = urlsplit(url)
        key = (parts.netloc, connections)
        if key not in self.sessions:
            connector = aiohttp.TCPConnector(
                limit=connections,
                # Below uvicorn's 5 s keep-alive: the client closes an idle connection before
                # the server can close it under a request being sent on it.
                keepalive_timeout=3,
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

    async def send(self, command: dict[str, Any]) -> tuple[str | None, float]:
        """One request and the cheap check of its answer: (what is wrong or None, when it
        ended)."""
        request = Request(**command["request"])
        session = self.session(command["url"], command["connections"])
        try:
            async with session.request(
                request.method,
                command["url"],
                data=request.body.encode() if request.body is not None else None,
                headers=JSON_HEADERS if request.body is not None else None,
            ) as response:
                content = await response.read()
                problem = request.problem(response.status, content)
        except (TimeoutError, aiohttp.ClientError, OSError) as error:
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
        loop = asyncio.get_running_loop()
        latency, lateness = new_histogram(), new_histogram()
        failures: Counter[str] = Counter()
        tasks: set[asyncio.Task[None]] = set()
        state = {"in_flight": 0, "waited": 0, "counted": 0, "served": 0, "last_end": 0.0}
        start = time.perf_counter() + LEAD_S
        count_from = start + command["settle_s"]
        end = start + command["duration_s"]

        async def request(due: float, counted: bool) -> None:
            try:
                problem, ended = await self.send(command)
            finally:
                state["in_flight"] -= 1
            state["last_end"] = max(state["last_end"], time.perf_counter())
            if not counted:
                return
            if count_from <= ended <= end:
                state["served"] += 1
            if problem is not None:
                failures[problem] += 1
            else:
                record_us(latency, ended - due)

        def fire(due: float) -> None:
            counted = due >= count_from
            if counted:
                state["counted"] += 1
                record_us(lateness, time.perf_counter() - due)
                if state["in_flight"] >= connections:
                    state["waited"] += 1
            # Counted here, not when the task first runs: several due times can fire in one
            # turn of the loop.
            state["in_flight"] += 1
            task = loop.create_task(request(due, counted))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        scheduled = asyncio.Event()
        thread = threading.Thread(
            target=keep_schedule, args=(loop, offsets, start, fire, scheduled), daemon=True
        )
        thread.start()
        await scheduled.wait()
        unfinished = 0
        if tasks:
            _, left = await asyncio.wait(set(tasks), timeout=command["drain_s"])
            for task in left:
                task.cancel()
            unfinished = len(left)
            if left:
                await asyncio.wait(left)
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
        start = time.perf_counter()
        count_from = start + command["settle_s"]
        end = start + command["duration_s"]

        async def user() -> None:
            while (sent := time.perf_counter()) < end:
                problem, ended = await self.send(command)
                if sent < count_from or ended > end:
                    continue
                if problem is not None:
                    failures[problem] += 1
                else:
                    record_us(latency, ended - sent)

        await asyncio.gather(*(user() for _ in range(command["connections"])))
        counted_s = end - count_from
        return {
            "completed": latency.get_total_count(),
            "failures": dict(failures),
            "served_rps": latency.get_total_count() / counted_s if counted_s > 0 else None,
            "latency_us": encoded(latency),
        }

    async def run(self, command: dict[str, Any]) -> dict[str, Any]:
        # The generator's own collections would stop its scheduling thread mid-window (a full
        # one takes milliseconds) and be counted against the server: none run in a window;
        # what a window left is collected after it.
        gc.disable()
        try:
            if command["op"] == "open":
                return await self.open_window(command)
            if command["op"] == "closed":
                return await self.closed_window(command)
            raise ValueError(f"unknown command {command['op']!r}")
        finally:
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


def main() -> None:
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    asyncio.run(serve())


if __name__ == "__main__":
    main()
