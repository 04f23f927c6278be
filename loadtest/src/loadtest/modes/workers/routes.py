"""The requests that make every worker serve every route once, proven by the PID each answer
names (commons/probes/workers.py): the listening socket is shared, and the kernel hands a new
connection to whichever worker accepts first, so connections are opened until each worker holds
one, and each worker's routes go down its own."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from loadtest.generated.apps import exception_line, normalised
from loadtest.lab.http import http_client

PID_HEADER = "x-lab-worker-pid"  # commons/probes/workers.py
ONE_CONNECTION = httpx.Limits(max_connections=1, max_keepalive_connections=1)


class Unfinished(Exception):
    """A tree that gave no figures: over the bound, failed (the app's own error) or a worker
    restarted. A result, not a crash of the run."""


@dataclass(frozen=True)
class WarmRoute:
    """A request every worker must serve once, and what it must answer."""

    method: str
    path: str
    body: Any = None
    expected: Any = None  # the JSON (normalised), where it is known
    status: int = 200


class RouteCaller:
    """Requests from a pool of threads, each with its own client and a new connection per
    request, so the kernel hands each to whichever worker accepts first: concurrent requests
    keep the busy workers from taking them all."""

    def __init__(self, base_url: str, threads: int, timeout_s: float) -> None:
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.local = threading.local()
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="lab-workers")
        self.clients: list[httpx.Client] = []
        self.lock = threading.Lock()

    def client(self) -> httpx.Client:
        if not hasattr(self.local, "client"):
            self.local.client = http_client(
                base_url=self.base_url,
                timeout=self.timeout_s,
                limits=httpx.Limits(max_keepalive_connections=0),
            )
            with self.lock:
                self.clients.append(self.local.client)
        return self.local.client

    def call(self, route: WarmRoute) -> httpx.Response:
        return self.client().request(route.method, route.path, json=route.body)

    def __enter__(self) -> "RouteCaller":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        for client in self.clients:
            client.close()


def answer_of(route: WarmRoute, response: httpx.Response, what: str) -> int:
    """The PID of the worker that answered, once the answer is checked; a wrong answer is the
    tree's result ("failed: ..."), not a crash of the run."""
    where = f"{route.method} {route.path}"
    if response.status_code != route.status:
        raise Unfinished(f"failed: {where} answered {response.status_code}, not {route.status}")
    if route.expected is not None:
        try:
            answer = response.json()
        except ValueError:
            raise Unfinished(f"failed: {where} answered no JSON") from None
        if normalised(answer) != route.expected:
            raise Unfinished(f"failed: {where} answered other JSON than its model ({what})")
    pid = response.headers.get(PID_HEADER, "")
    if not pid.isdigit():
        raise Unfinished(f"failed: {where} answered without {PID_HEADER} (not the lab's wrapper?)")
    return int(pid)


def every_route_in_every_worker(
    base_url: str,
    log_path: Path,
    routes: tuple[WarmRoute, ...],
    pids: set[int],
    bound_s: float,
    what: str,
) -> tuple[int, dict[int, int]]:
    """Call the routes until each has been answered by every worker in `pids`; returns the
    requests it took and, per worker, how many of the routes it answered (all of them).
    Unfinished when the bound passes first, or a worker not in `pids` answers (one
    restarted).

    In passes: connections are opened, and held, until every worker that still lacks a route
    holds one (the kernel hands each new connection to whichever worker accepts first: about N
    tries find a given worker of N); then each of those workers is sent the routes it lacks
    down its own connection, a thread per worker. A pass leaves work only where the server
    closed a connection between two requests; the next pass finds that worker again."""
    coverage = Coverage(routes, pids, what, time.monotonic() + bound_s)
    try:
        while needed := coverage.lacking():
            if time.monotonic() > coverage.deadline:
                left = sum(1 for served_by in coverage.seen if served_by != pids)
                raise Unfinished(
                    f"over {bound_s:g} s (after {coverage.sent} requests, {left} routes "
                    "not yet served by every worker)"
                )
            with ExitStack() as held_open:
                held = coverage.hold_connections(held_open, base_url, bound_s, needed)
                if held:
                    with ThreadPoolExecutor(max_workers=len(held)) as pool:
                        list(pool.map(coverage.on_own_connection, held, held.values()))
        answered = {pid: sum(pid in by for by in coverage.seen) for pid in sorted(pids)}
        return coverage.sent, answered
    except httpx.TimeoutException:
        raise Unfinished(f"over {bound_s:g} s (a request)") from None
    except httpx.TransportError as error:  # a worker died under a request
        raise Unfinished(f"failed: {exception_line(log_path) or error}") from None


@dataclass
class Coverage:
    """Which worker has answered which route so far (`seen`, a set of pids per route), and the
    requests it took."""

    routes: tuple[WarmRoute, ...]
    pids: set[int]
    what: str
    deadline: float  # the monotonic clock's
    seen: list[set[int]] = field(init=False)
    sent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.seen = [set() for _ in self.routes]

    def record(self, number: int, response: httpx.Response) -> int:
        pid = answer_of(self.routes[number], response, self.what)
        if pid not in self.pids:
            raise Unfinished(f"failed: worker {pid} answered, not one of the first ready")
        with self.lock:
            self.seen[number].add(pid)
            self.sent += 1
        return pid

    def lacking(self) -> set[int]:
        return {pid for served_by in self.seen for pid in self.pids - served_by}

    def hold_connections(
        self, held_open: ExitStack, base_url: str, bound_s: float, needed: set[int]
    ) -> dict[int, httpx.Client]:
        """Connections opened (and kept in `held_open`) until each worker in `needed` holds
        one, each asked one route on the way: a connection per worker found."""
        held: dict[int, httpx.Client] = {}
        for attempt in range(16 * len(self.pids) + 16):
            if needed <= set(held) or time.monotonic() > self.deadline:
                break
            client = held_open.enter_context(
                http_client(base_url=base_url, timeout=bound_s, limits=ONE_CONNECTION)
            )
            number = attempt % len(self.routes)
            route = self.routes[number]
            pid = self.record(number, client.request(route.method, route.path, json=route.body))
            if pid in needed:
                held.setdefault(pid, client)
        return held

    def on_own_connection(self, pid: int, client: httpx.Client) -> None:
        """The routes the worker lacks, down its own connection."""
        for number, route in enumerate(self.routes):
            if pid not in self.seen[number] and time.monotonic() < self.deadline:
                try:
                    response = client.request(route.method, route.path, json=route.body)
                except httpx.TransportError:
                    return  # closed between two requests: the next pass finds this worker again
                self.record(number, response)


def collect_in_every_worker(
    base_url: str, log_path: Path, pids: set[int], bound_s: float, what: str
) -> int:
    """A full garbage collection in every worker (the wrapper's own route); the requests it
    took."""
    return every_route_in_every_worker(base_url, log_path, (COLLECT,), pids, bound_s, what)[0]


def load_routes(
    base_url: str, routes: tuple[WarmRoute, ...], threads: int, seconds: float
) -> dict[str, Any]:
    """Every route in turn from `threads` concurrent clients for `seconds`: how many requests
    were answered with the status they should have, how many not, and the first that was
    not."""
    answered = failed = 0
    first_failure: str | None = None
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    stop = threading.Event()  # set when the load ends early (Ctrl-C): no thread outlives it

    def keep_calling(offset: int, caller: RouteCaller) -> None:
        nonlocal answered, failed, first_failure
        number = offset
        while time.monotonic() < stop_at and not stop.is_set():
            route = routes[number % len(routes)]
            number += 1
            try:
                response = caller.call(route)
                problem = (
                    None
                    if response.status_code == route.status
                    else f"{route.method} {route.path} answered {response.status_code}"
                )
            except httpx.HTTPError as error:
                problem = f"{route.method} {route.path}: {type(error).__name__}"
            with lock:
                if problem is None:
                    answered += 1
                else:
                    failed += 1
                    first_failure = first_failure or problem

    with RouteCaller(base_url, threads=threads, timeout_s=max(seconds, 5.0)) as caller:
        futures = [caller.pool.submit(keep_calling, offset, caller) for offset in range(threads)]
        try:
            for future in futures:
                future.result()
        finally:
            stop.set()
    return {"answered": answered, "failed": failed, "first_failure": first_failure}


COLLECT = WarmRoute("GET", "/lab-workers/collect")
