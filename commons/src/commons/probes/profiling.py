"""One app's requests under cProfile, in-process: `python -m commons.probes.profiling --module
app_v2.main:app --scenario read --requests 500 --output v2-read.prof` (needs DATABASE_URL).

The app is driven as an ASGI callable (scope, receive, send) through its whole middleware stack,
with no HTTP client or server in the profile. One thing differs from the served app: FastAPI runs
sync routes and dependencies in anyio's worker threads, and cProfile sees only the thread it was
enabled in, so here they run inline, on the event loop's thread (`run_inline`).

Unlike the rest of commons it reaches Pydantic, through the app named by --module: it runs only
in an app's environment, never in the apps themselves.
"""

import argparse
import asyncio
import cProfile
import functools
import importlib
import inspect
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import anyio.to_thread

from commons.hardening.asgi import ASGIApp, Message

# The harness's two READ scenarios (loadtest/load/scenarios.py), as paths and query strings.
SCENARIO_REQUESTS = {
    "synthetic": ("/posts_synthetic", b"per_page=100"),
    "read": ("/posts", b"per_page=100"),
}
EXPECTED_POSTS = 100
WARMUP_REQUESTS = 50  # imports, caches, the pool's connections: none of it in the profile


class ProfilingError(Exception):
    """Reported in one line, with exit status 1."""


@dataclass
class Answer:
    status: int = 0
    body: bytes = b""
    seconds: float = 0.0  # in the app, from the call to its return


async def run_inline(function: Callable[..., Any], *args: Any, **_options: Any) -> Any:
    """Stands in for anyio.to_thread.run_sync: the call runs here, where cProfile can see it
    (the thread limiter and cancellation options do not matter to one request at a time)."""
    if is_compiled_pydantic(function):
        return call_compiled_pydantic(function, *args)
    return function(*args)


def is_compiled_pydantic(function: Callable[..., Any]) -> bool:
    """A Cython-compiled Pydantic 1 function (FastAPI hands `field.validate` to the thread pool):
    not a Python function, so cProfile cannot see into it."""
    target = function.func if isinstance(function, functools.partial) else function
    target = getattr(target, "__func__", target)
    module = getattr(target, "__module__", None) or ""
    return module.split(".")[0] == "pydantic" and not inspect.isfunction(target)


def call_compiled_pydantic(function: Callable[..., Any], *args: Any) -> Any:
    """Calls compiled Pydantic 1, which cProfile does not see: the call's whole time is this
    function's own time, so the profile names it instead of burying it in run_inline's
    (loadtest/src/loadtest/modes/profile/buckets.py puts it in its own bucket)."""
    return function(*args)


def load_app(target: str) -> ASGIApp:
    """`package.module:attribute`, as uvicorn takes it."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ProfilingError(f"--module {target!r}: expected module:attribute")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise ProfilingError(f"--module {target!r}: {error}") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ProfilingError(f"--module {target!r}: {module_name} has no {attribute}") from None


def request_scope(path: str, query_string: bytes, state: dict[str, Any]) -> Message:
    """What uvicorn would pass for `GET path?query_string` from a local client."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query_string,
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"accept", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": dict(state),
    }


async def send_request(app: ASGIApp, scope: Message, profiler: cProfile.Profile | None) -> Answer:
    """One request through the app; only the app's own work runs with the profiler on."""
    answer = Answer()
    answered = asyncio.Event()
    body_sent = False

    async def receive() -> Message:
        nonlocal body_sent
        if not body_sent:
            body_sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await answered.wait()  # as uvicorn: a disconnect only once the response is out
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
        elif message["type"] == "http.response.body":
            answer.body += message.get("body", b"")
            if not message.get("more_body", False):
                answered.set()

    started = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    try:
        await app(scope, receive, send)
    finally:
        if profiler is not None:
            profiler.disable()
        answer.seconds = time.perf_counter() - started
    return answer


def check_answer(answer: Answer, what: str) -> None:
    if answer.status != 200:
        raise ProfilingError(f"{what} answered {answer.status}: {answer.body[:200]!r}")
    try:
        posts = json.loads(answer.body)["posts"]
    except (ValueError, KeyError, TypeError):
        raise ProfilingError(f"{what} answered 200 without a posts list") from None
    if len(posts) != EXPECTED_POSTS:
        raise ProfilingError(f"{what} answered {len(posts)} posts, not {EXPECTED_POSTS}")


class Lifespan:
    """The ASGI lifespan protocol, as a server runs it around serving (startup handlers, if the
    app has any, run before the first request)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.state: dict[str, Any] = {}
        self.inbox: asyncio.Queue[Message] = asyncio.Queue()
        self.outbox: asyncio.Queue[Message] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": self.state}
        self.task = asyncio.ensure_future(self.app(scope, self.inbox.get, self.outbox.put))
        await self.inbox.put({"type": "lifespan.startup"})
        reply = await self.outbox.get()
        if reply["type"] != "lifespan.startup.complete":
            raise ProfilingError(f"the app's start-up failed: {reply.get('message', reply)}")

    async def stop(self) -> None:
        if self.task is None or self.task.done():
            return
        await self.inbox.put({"type": "lifespan.shutdown"})
        await self.outbox.get()
        await self.task


@dataclass
class ProfiledRun:
    profiler: cProfile.Profile
    # Wall seconds in the app over all requests: the same number of requests just before,
    # without the profiler, and the profiled ones (the profiler's cost included).
    unprofiled_s: float
    profiled_s: float


async def profile_requests(app: ASGIApp, scenario: str, requests: int, warmup: int) -> ProfiledRun:
    """Warm up; time `requests` requests without the profiler (what cProfile's own cost
    inflates is then plain to see), then profile as many."""
    path, query_string = SCENARIO_REQUESTS[scenario]
    what = f"GET {path}?{query_string.decode()}"
    lifespan = Lifespan(app)
    await lifespan.start()
    try:

        async def run(count: int, profiler: cProfile.Profile | None) -> float:
            seconds = 0.0
            for _ in range(count):
                scope = request_scope(path, query_string, lifespan.state)
                try:
                    answer = await send_request(app, scope, profiler)
                except Exception as error:  # noqa: BLE001 - re-raised by Starlette after its 500
                    raise ProfilingError(f"{what} raised {type(error).__name__}: {error}") from None
                check_answer(answer, what)
                seconds += answer.seconds
            return seconds

        await run(warmup, None)
        unprofiled_s = await run(requests, None)
        profiler = cProfile.Profile()
        profiled_s = await run(requests, profiler)
        return ProfiledRun(profiler, unprofiled_s, profiled_s)
    finally:
        await lifespan.stop()


def whole_number(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number ≥ {minimum}")
        return value

    return parse


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one line on stderr (the runner shows the last one), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"commons.probes.profiling: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m commons.probes.profiling", description=__doc__)
    parser.add_argument("--module", required=True, help="the app, as uvicorn takes it")
    parser.add_argument("--scenario", required=True, choices=tuple(SCENARIO_REQUESTS))
    parser.add_argument("--requests", required=True, type=whole_number(1))
    parser.add_argument("--warmup", type=whole_number(0), default=WARMUP_REQUESTS)
    parser.add_argument("--output", required=True, type=Path, help="the .prof file to write")
    return parser


def versions(module_name: str) -> dict[str, Any]:
    import fastapi
    import pydantic

    app_module = sys.modules[module_name]
    found = {
        "python": sys.version.split()[0],
        "fastapi": fastapi.__version__,
        "pydantic": pydantic.VERSION,
        # As the app reports it on /health (app_v1/main.py): 1.10's wheels are Cython-compiled,
        # Pydantic 2's pydantic.v1 (the v1-shim arm) is not.
        "pydantic_compiled": getattr(app_module, "PYDANTIC_COMPILED", None),
    }
    if (v1 := getattr(app_module, "PYDANTIC_V1_VERSION", None)) is not None:
        found["pydantic_v1"] = v1
    return found


def main(argv: list[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    try:
        app = load_app(arguments.module)
        anyio.to_thread.run_sync = run_inline  # type: ignore[assignment]
        run = asyncio.run(
            profile_requests(app, arguments.scenario, arguments.requests, arguments.warmup)
        )
        run.profiler.dump_stats(arguments.output)
    except ProfilingError as error:
        print(f"commons.probes.profiling: error: {error}", file=sys.stderr)
        return 1
    # One line for the runner (loadtest/.../modes/profile/runner.py): what ran, on which versions.
    summary = {
        "requests": arguments.requests,
        "warmup": arguments.warmup,
        "unprofiled_s": run.unprofiled_s,
        "profiled_s": run.profiled_s,
        "versions": versions(arguments.module.partition(":")[0]),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
