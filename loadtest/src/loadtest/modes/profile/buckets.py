"""From a .prof file to where each request's time went (modes/profile/runner.py runs them).

Bucketing works on pstats' own time (tottime), so the buckets add up to the profiled total:
library code goes by its file (Pydantic, FastAPI's encoders.py, json, SQLAlchemy/psycopg, the
lab's own code, the rest of the framework); helpers that belong to no one (built-in C functions
not named after a library, the standard library, FastAPI's Pydantic compatibility layer) count
where they are called from, split by pstats' caller edges. Compiled Pydantic 1 is invisible to
cProfile: its time is the own time of the few functions that call into it, which get a bucket
of their own (COMPILED_PYDANTIC_CALLERS).
"""

import pstats
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TOP_FUNCTIONS = 5

# Bucket keys (results.json) and their labels, in the tables' order.
BUCKETS = {
    "pydantic": "Pydantic",
    "pydantic_compiled": "Pydantic 1, compiled (own time of its callers)",
    "fastapi_encoding": "FastAPI encoding (jsonable_encoder)",
    "json_encoding": "JSON encoding (json.dumps)",
    "database_wait": "database: round trips (psycopg's wait)",
    "database": "database: ORM and driver (SQLAlchemy, psycopg)",
    "app_code": "the app's own code (commons, app_v1/app_v2)",
    "framework": "rest of the framework (FastAPI, Starlette, anyio)",
    "harness": "profiling harness (stands in for uvicorn, anyio's threads)",
}
# Where FastAPI 0.125 (and the harness) call into Pydantic 1: Cython functions make no profiler
# events, so their whole time is the own time of the Python function that called them.
# (file ending, function name) -> what the call is.
COMPILED_PYDANTIC_CALLERS = {
    ("commons/probes/profiling.py", "call_compiled_pydantic"): "field.validate: the response model",
    ("fastapi/_compat/v1.py", "_model_dump"): "model.dict() before jsonable_encoder",
    ("fastapi/dependencies/utils.py", "_validate_value_with_model_field"): "query parameters",
}
# Third-party packages (the first directory under site-packages) and their buckets; any other
# package counts where it is called from, like the standard library.
PACKAGE_BUCKETS = {
    "pydantic": "pydantic",
    "pydantic_core": "pydantic",
    "orjson": "json_encoding",
    "ujson": "json_encoding",
    "sqlalchemy": "database",
    "psycopg": "database",
    "psycopg_binary": "database",
    "psycopg_pool": "database",
    "fastapi": "framework",
    "fastapi_offline": "framework",
    "starlette": "framework",
    "anyio": "framework",
    "sniffio": "framework",
}
LAB_PACKAGES = ("commons", "app_v1", "app_v2")
# Built-in (C) functions are named, not filed: these names give their library away.
BUILTIN_NAME_BUCKETS = (
    ("pydantic", "pydantic"),
    ("_json.", "json_encoding"),
    ("orjson", "json_encoding"),
    ("ujson", "json_encoding"),
    ("psycopg", "database"),
    ("sqlalchemy", "database"),
    ("_lsprof", "harness"),  # the profiler's own enable/disable
)
# psycopg's wait() drives a query's round trip in compiled code (wait_c): the time it blocks
# on PostgreSQL's socket, the server's own time included, is its own time.
DATABASE_WAIT = re.compile(r"psycopg/(connection\.py:wait|waiting\.py:.*)$")
HELPER = None  # counts where it is called from
STDLIB_JSON = re.compile(r"/json/[^/]+\.py$")

FunctionKey = tuple[str, int, str]  # pstats: (file, line, function name)


@dataclass(frozen=True)
class Profile:
    """One app's profile of one scenario, bucketed."""

    requests: int
    total_s: float  # own time of every function: the profiled total
    calls: int  # function calls the profiler saw (each one costs it time)
    buckets_s: dict[str, float]
    top: list[dict[str, Any]]  # the functions with the most own time

    def as_dict(self) -> dict[str, Any]:
        total = self.total_s or 1.0
        return {
            "requests": self.requests,
            "total_us_per_request": per_request_us(self.total_s, self.requests),
            "calls_per_request": self.calls / self.requests,
            "buckets": {
                bucket: {
                    "us_per_request": per_request_us(seconds, self.requests),
                    "share": seconds / total,
                }
                for bucket, seconds in self.buckets_s.items()
            },
            "top_functions": self.top,
        }


def per_request_us(seconds: float, requests: int) -> float:
    return seconds / requests * 1e6


def module_path(filename: str) -> tuple[str, str] | None:
    """(package, path from it) for third-party and lab code; None for the standard library."""
    path = filename.replace("\\", "/")
    if "/site-packages/" in path:
        inner = path.rsplit("/site-packages/", 1)[1]
        return inner.split("/", 1)[0], inner
    for package in LAB_PACKAGES:
        marker = f"/src/{package}/"
        if marker in path:
            return package, package + "/" + path.rsplit(marker, 1)[1]
    return None


def own_bucket(key: FunctionKey, compiled_pydantic: bool) -> str | None:
    """The bucket a function's own time belongs to, or HELPER when its callers decide."""
    filename, _, name = key
    if filename == "~":  # a built-in C function: only its name to go by
        lowered = name.lower()
        for fragment, bucket in BUILTIN_NAME_BUCKETS:
            if fragment in lowered:
                return bucket
        return HELPER
    if any(
        filename.endswith(end) and name == function for end, function in COMPILED_PYDANTIC_CALLERS
    ):
        if compiled_pydantic or name == "call_compiled_pydantic":
            return "pydantic_compiled"
    located = module_path(filename)
    if located is None:
        return "json_encoding" if STDLIB_JSON.search(filename) else HELPER
    package, inner = located
    if DATABASE_WAIT.match(f"{inner}:{name}"):
        return "database_wait"
    if package in LAB_PACKAGES:
        return "harness" if inner == "commons/probes/profiling.py" else "app_code"
    if inner == "fastapi/encoders.py":
        return "fastapi_encoding"
    if inner.startswith("fastapi/_compat/"):
        return HELPER  # FastAPI's layer over both Pydantic majors: counts for whoever uses it
    return PACKAGE_BUCKETS.get(package, HELPER)


def bucket_profile(stats: dict[FunctionKey, tuple], compiled_pydantic: bool) -> dict[str, float]:
    """Seconds of own time per bucket; they add up to the profile's total own time.

    A helper's own time is split over its callers in proportion to the time it spent on behalf
    of each (pstats' per-caller tottime), and a helper caller passes its share on up: solved by
    iterating, since helpers may call one another in cycles. A helper with no caller was called
    by the harness (the profiler is enabled in it).
    """
    owners = {key: own_bucket(key, compiled_pydantic) for key in stats}
    # For each helper: its callers with their weights (share of the helper's own time).
    callers: dict[FunctionKey, list[tuple[FunctionKey, float]]] = {}
    for key, (_, _, _, _, caller_edges) in stats.items():
        if owners[key] is not HELPER:
            continue
        edges = [(caller, edge[2]) for caller, edge in caller_edges.items() if caller != key]
        weight = sum(seconds for _, seconds in edges)
        callers[key] = [(caller, seconds / weight) for caller, seconds in edges] if weight else []
    shares: dict[FunctionKey, dict[str, float]] = {key: {} for key in callers}
    for _ in range(50):
        shares = {key: blend(callers[key], owners, shares) for key in callers}
    totals: dict[str, float] = defaultdict(float)
    for key, (_, _, own_s, _, _) in stats.items():
        owner = owners[key]
        if owner is not HELPER:
            totals[owner] += own_s
            continue
        distribution = shares[key]
        mass = sum(distribution.values())
        if mass <= 0:
            totals["harness"] += own_s
            continue
        for bucket, share in distribution.items():
            totals[bucket] += own_s * share / mass  # normalised: what cycles kept back
    return {bucket: totals[bucket] for bucket in BUCKETS if totals.get(bucket)}


def blend(
    edges: list[tuple[FunctionKey, float]],
    owners: dict[FunctionKey, str | None],
    shares: dict[FunctionKey, dict[str, float]],
) -> dict[str, float]:
    """One step: a helper's bucket shares from its callers' (current) ones."""
    if not edges:
        return {"harness": 1.0}
    blended: dict[str, float] = defaultdict(float)
    for caller, weight in edges:
        owner = owners.get(caller, HELPER)
        if owner is not HELPER:
            blended[owner] += weight
        else:
            for bucket, share in shares.get(caller, {}).items():
                blended[bucket] += weight * share
    return dict(blended)


BUILTIN_METHOD = re.compile(r"<method '(?P<method>\w+)' of '(?P<owner>[\w.]+)' objects>")
BUILTIN_FUNCTION = re.compile(r"<built-in method (?P<function>[\w.]+)>")


def describe_function(key: FunctionKey) -> str:
    """`name (package/module.py:line)`, or a built-in's name made short enough for a table."""
    filename, line, name = key
    if filename == "~":
        if method := BUILTIN_METHOD.fullmatch(name):
            *package, owner = method["owner"].split(".")
            library = f"{package[0]} " if package and package[0] != "builtins" else ""
            return f"{library}{owner}.{method['method']} (built-in)"
        if function := BUILTIN_FUNCTION.fullmatch(name):
            return f"{function['function'].removeprefix('builtins.')} (built-in)"
        return name
    located = module_path(filename)
    where = located[1] if located else Path(filename).name
    return f"{name} ({where}:{line})"


def read_profile(path: Path, requests: int, compiled_pydantic: bool) -> Profile:
    stats = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    total_s = sum(entry[2] for entry in stats.values())
    ranked = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)[:TOP_FUNCTIONS]
    top = [
        {
            "function": describe_function(key),
            "us_per_request": per_request_us(entry[2], requests),
            "calls_per_request": entry[1] / requests,
            "bucket": own_bucket(key, compiled_pydantic) or "helper",
        }
        for key, entry in ranked
    ]
    calls = sum(entry[1] for entry in stats.values())
    return Profile(requests, total_s, calls, bucket_profile(stats, compiled_pydantic), top)
