"""`./test.sh profile`: the bucketing of pstats data, and one short real profile of an app."""

import cProfile
import json
import pstats
import subprocess
from pathlib import Path

import pytest

from commons.embedded_postgres import embedded_postgres
from loadtest.lab.arms import arm_python
from loadtest.lab.paths import REPOSITORY_ROOT
from loadtest.modes.profile.buckets import (
    BUCKETS,
    bucket_profile,
    describe_function,
    own_bucket,
    read_profile,
)
from loadtest.modes.profile.runner import run_one

SITE = "/lab/app_v1/.venv/lib/python3.11/site-packages"


def build_payload() -> list[dict[str, object]]:
    return [{"id": number, "title": f"post {number}", "tags": ["a", "b"]} for number in range(200)]


def encode_posts() -> str:
    return json.dumps(build_payload())


def profile_of(function, tmp_path: Path, calls: int = 50) -> Path:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        function()
    profiler.disable()
    path = tmp_path / "known.prof"
    profiler.dump_stats(path)
    return path


def test_bucketing_puts_json_time_in_json_encoding_and_adds_up(tmp_path) -> None:
    path = profile_of(encode_posts, tmp_path)
    stats = pstats.Stats(str(path)).stats
    total = sum(entry[2] for entry in stats.values())
    buckets = bucket_profile(stats, compiled_pydantic=False)
    assert buckets["json_encoding"] > 0
    assert sum(buckets.values()) == pytest.approx(total)
    # The rest is this test module's own code, called by no one the profile saw: the code
    # that enabled the profiler, which is what "harness" means.
    assert set(buckets) == {"json_encoding", "harness"}
    profile = read_profile(path, 50, compiled_pydantic=False).as_dict()
    shares = [bucket["share"] for bucket in profile["buckets"].values()]
    assert sum(shares) == pytest.approx(1.0)
    assert profile["requests"] == 50 and profile["calls_per_request"] > 1


def test_files_decide_for_library_code() -> None:
    cases = {
        (f"{SITE}/pydantic/main.py", 1, "model_validate"): "pydantic",
        (f"{SITE}/fastapi/encoders.py", 113, "jsonable_encoder"): "fastapi_encoding",
        (f"{SITE}/fastapi/routing.py", 97, "app"): "framework",
        (f"{SITE}/starlette/routing.py", 718, "app"): "framework",
        (f"{SITE}/sqlalchemy/orm/loading.py", 1077, "_instance"): "database",
        (f"{SITE}/psycopg/connection.py", 479, "wait"): "database_wait",
        (f"{SITE}/psycopg/cursor.py", 1, "fetchall"): "database",
        ("/usr/lib/python3.11/json/encoder.py", 205, "iterencode"): "json_encoding",
        ("/lab/commons/src/commons/synthetic.py", 44, "<listcomp>"): "app_code",
        ("/lab/app_v2/src/app_v2/schemas.py", 51, "is_published"): "app_code",
        ("/lab/commons/src/commons/probes/profiling.py", 60, "run_inline"): "harness",
        ("~", 0, "<method 'validate_python' of 'pydantic_core._pydantic_core.X' objects>"): (
            "pydantic"
        ),
        ("~", 0, "<built-in method _json.encode_basestring_ascii>"): "json_encoding",
        ("~", 0, "<method 'disable' of '_lsprof.Profiler' objects>"): "harness",
    }
    for key, bucket in cases.items():
        assert own_bucket(key, compiled_pydantic=False) == bucket, key


def test_helpers_count_for_their_callers() -> None:
    for key in [
        ("~", 0, "<built-in method builtins.isinstance>"),
        ("/usr/lib/python3.11/dataclasses.py", 1256, "is_dataclass"),
        ("<frozen abc>", 117, "__instancecheck__"),
        (f"{SITE}/fastapi/_compat/main.py", 60, "_is_undefined"),
    ]:
        assert own_bucket(key, compiled_pydantic=False) is None, key


def test_callers_of_compiled_pydantic_1_get_its_bucket_only_when_it_is_compiled() -> None:
    model_dump = (f"{SITE}/fastapi/_compat/v1.py", 221, "_model_dump")
    query = (f"{SITE}/fastapi/dependencies/utils.py", 700, "_validate_value_with_model_field")
    assert own_bucket(model_dump, compiled_pydantic=True) == "pydantic_compiled"
    assert own_bucket(query, compiled_pydantic=True) == "pydantic_compiled"
    assert own_bucket(model_dump, compiled_pydantic=False) is None  # _compat: a helper
    assert own_bucket(query, compiled_pydantic=False) == "framework"
    shim = ("/lab/commons/src/commons/probes/profiling.py", 65, "call_compiled_pydantic")
    assert own_bucket(shim, compiled_pydantic=False) == "pydantic_compiled"


def test_a_helper_is_split_by_its_callers_time_and_passes_it_up() -> None:
    encoder = (f"{SITE}/fastapi/encoders.py", 113, "jsonable_encoder")
    route = (f"{SITE}/fastapi/routing.py", 97, "app")
    stdlib = ("/usr/lib/python3.11/dataclasses.py", 1256, "is_dataclass")
    builtin = ("~", 0, "<built-in method builtins.isinstance>")
    # pstats: key -> (primitive calls, calls, own s, cumulative s, {caller: (.., .., own s, ..)})
    stats = {
        route: (1, 1, 1.0, 9.0, {}),
        encoder: (1, 1, 2.0, 8.0, {route: (1, 1, 2.0, 8.0)}),
        # 3 s on behalf of jsonable_encoder, 1 s on behalf of the route
        stdlib: (4, 4, 4.0, 6.0, {encoder: (3, 3, 3.0, 4.0), route: (1, 1, 1.0, 2.0)}),
        # called only by the stdlib helper: it follows that helper's split
        builtin: (4, 4, 2.0, 2.0, {stdlib: (4, 4, 2.0, 2.0)}),
    }
    buckets = bucket_profile(stats, compiled_pydantic=False)
    assert buckets["fastapi_encoding"] == pytest.approx(2.0 + 3.0 + 1.5)
    assert buckets["framework"] == pytest.approx(1.0 + 1.0 + 0.5)
    assert sum(buckets.values()) == pytest.approx(9.0)
    assert list(buckets) == [bucket for bucket in BUCKETS if bucket in buckets]


def test_built_ins_get_short_names() -> None:
    serializer = "pydantic_core._pydantic_core.SchemaSerializer"
    key = ("~", 0, f"<method 'to_python' of '{serializer}' objects>")
    assert describe_function(key) == "pydantic_core SchemaSerializer.to_python (built-in)"
    assert describe_function(("~", 0, "<built-in method builtins.isinstance>")) == (
        "isinstance (built-in)"
    )
    fastapi_key = (f"{SITE}/fastapi/encoders.py", 113, "jsonable_encoder")
    assert describe_function(fastapi_key) == "jsonable_encoder (fastapi/encoders.py:113)"


def profiling_command(tmp_path: Path, *arguments: str) -> list[str]:
    return [
        str(arm_python("v2")),
        "-m",
        "commons.probes.profiling",
        "--output",
        str(tmp_path / "x.prof"),
        *arguments,
    ]


def run_profiling(command: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPOSITORY_ROOT, env=env, capture_output=True, text=True)


def test_profiling_refuses_bad_arguments_in_one_line(tmp_path) -> None:
    command = profiling_command(
        tmp_path, "--module", "app_v2.main:app", "--scenario", "read", "--requests", "0"
    )
    result = run_profiling(command)
    assert result.returncode == 2
    assert result.stderr == (
        "commons.probes.profiling: error: argument --requests: '0' is not a whole number ≥ 1\n"
    )


def test_profile_of_app_v2_synthetic_sees_pydantic(tmp_path) -> None:
    """One short real profile, in app_v2's own environment, against a real PostgreSQL; then
    the failures it reports in one line: a missing app, and READ on an empty table."""
    output = tmp_path / "v2-synthetic.prof"
    with embedded_postgres() as server:
        summary = run_one("v2", "synthetic", 50, output, server.url, None)
        missing = run_profiling(
            profiling_command(
                tmp_path,
                "--module",
                "app_v2.main:nope",
                "--scenario",
                "synthetic",
                "--requests",
                "5",
            ),
            DATABASE_URL=server.url,
        )
        empty = run_profiling(
            profiling_command(
                tmp_path, "--module", "app_v2.main:app", "--scenario", "read", "--requests", "5"
            ),
            DATABASE_URL=server.url,
        )
    assert output.exists()
    assert summary["requests"] == 50 and summary["versions"]["pydantic"].startswith("2.")
    assert summary["unprofiled_s"] > 0 and summary["profiled_s"] > 0
    profile = read_profile(output, 50, compiled_pydantic=False)
    assert profile.buckets_s["pydantic"] > 0
    assert "pydantic_compiled" not in profile.buckets_s
    assert sum(profile.buckets_s.values()) == pytest.approx(profile.total_s)
    assert (missing.returncode, missing.stderr) == (
        1,
        "commons.probes.profiling: error: --module 'app_v2.main:nope': app_v2.main has no nope\n",
    )
    assert (empty.returncode, empty.stderr) == (
        1,
        "commons.probes.profiling: error: GET /posts?per_page=100 answered 0 posts, not 100\n",
    )
    assert not (tmp_path / "x.prof").exists()
