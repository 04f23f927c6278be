"""What a profile run's results.json holds after its header (modes/session.py): its settings,
each app's versions, the buckets and notes the report explains, and the bucketed profiles."""

from typing import Any

from loadtest.lab.database import LabDatabase
from loadtest.lab.pinning import PinningPlan
from loadtest.load.scenarios import SCENARIOS
from loadtest.modes.profile.buckets import BUCKETS
from loadtest.modes.profile.settings import PROFILED_SCENARIOS, ProfileSettings


def build_profile_results(
    settings: ProfileSettings,
    warmup_requests: int,
    database: LabDatabase,
    pinning: PinningPlan,
    versions: dict[str, Any],
    profile: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    return {
        "settings": {
            "apps": list(settings.apps),
            "scenarios": {name: SCENARIOS[name].path for name in PROFILED_SCENARIOS},
            "requests": settings.requests,
            "warmup_requests": warmup_requests,
            "dataset_size": settings.dataset_size,
            "pinning": pinning.as_dict(),
            "database": {"kind": database.kind, "server_version": database.server_version},
        },
        "versions": versions,
        "buckets": BUCKETS,
        "notes": NOTES,
        "profile": profile,
    }


NOTES = [
    "Times are wall-clock time in the profiled thread (cProfile's clock): the database's round "
    "trips include PostgreSQL's own time, and a busy machine (other programs on the same "
    "CPUs) stretches every figure.",
    "Under the profiler every function call it sees costs extra, so the totals are inflated "
    "(compare the row without the profiler), and call-heavy Python code (jsonable_encoder) "
    "more than compiled code (pydantic-core, compiled Pydantic 1, whose inner calls it does "
    "not see): read the shares, not the µs, and expect v1's FastAPI encoding share to be "
    "overstated and its compiled Pydantic share understated.",
    "What differs from the served app: requests are driven in-process as ASGI calls, one at a "
    "time, through the whole middleware stack, with no HTTP server or client; and FastAPI's "
    "sync routes, dependencies and response validation run inline on the event loop's thread "
    "(anyio.to_thread.run_sync is patched), because cProfile sees only its own thread. The "
    "served app pays for a thread hop there instead.",
    "Pydantic 1.10 is Cython-compiled: cProfile cannot see into it, so its time is the own "
    "time of the functions that call it — FastAPI's _model_dump (model.dict()) and "
    "_validate_value_with_model_field (query parameters), and the harness's "
    "call_compiled_pydantic (response validation) — counted as 'Pydantic 1, compiled'. "
    "Python code it calls back (the app's @validator) is visible and counts as the app's. "
    "Other brief calls of FastAPI into compiled Pydantic (attribute reads of its ModelField) "
    "stay in FastAPI's buckets.",
    "Helpers count where they are called from: built-in C functions not named after a library, "
    "the standard library (but json) and fastapi/_compat/, split by pstats' caller edges.",
]
