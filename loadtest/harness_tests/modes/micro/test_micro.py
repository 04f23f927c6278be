"""`./test.sh micro`: the plan, the paired statistics and the tables on synthetic rounds, and
commons.probes.microbench itself, run for real (briefly) in app_v2's environment."""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loadtest.analysis.ratio import paired_ratios
from loadtest.lab.arms import arm_python
from loadtest.lab.errors import LabError
from loadtest.lab.paths import REPOSITORY_ROOT
from loadtest.modes.micro.report import (
    container_rows,
    encoder_rows,
    pydantic_rows,
    table_title,
    write_report,
)
from loadtest.modes.micro.results import PYDANTIC_GROUP, SHARED_GROUPS, summarise
from loadtest.modes.micro.runner import MicroJob, plan_jobs

PYDANTIC_NAMES = (
    "validate",
    "serialise",
    "validate_serialise",
    "construct_serialise",
    "construct",
    "fastapi_response_model",
    "plain_dicts",
    "plain_json",
    "plain_orjson",
)
ENCODER_NAMES = (
    "json_default",
    "json_prerendered",
    "orjson_native",
    "orjson_default",
    "ujson_default",
    "msgspec_native",
)
CONTAINER_FORMATS = (
    "pickle_2",
    "pickle_highest",
    "marshal",
    "json",
    "orjson",
    "msgspec_json",
    "msgspec_msgpack",
)
# The machine's speed per round, drifting by far more than any ratio below.
DRIFT = (1.0, 1.3, 0.8, 1.1, 0.7, 1.25)


def raw_benchmark(
    group: str, name: str, baseline: str, seconds: list[float], **details: str
) -> dict[str, Any]:
    return {
        "group": group,
        "name": name,
        "label": name.replace("_", " "),
        "baseline": baseline,
        **details,
        "loops_per_measurement": 10,
        "samples": [
            {"round": number, "seconds_per_call": value} for number, value in enumerate(seconds)
        ],
    }


def raw_run(
    arm: str, process: int, groups: tuple[str, ...], benchmarks: list[dict], **extra: Any
) -> dict[str, Any]:
    return {
        "arm": arm,
        "environment": f"app_{arm}",
        "app": f"app_{arm}",
        "process": process,
        "versions": {"python": "3.11.7", "pydantic": "1.10" if arm == "v1" else "2.14"},
        "settings": {"groups": list(groups), "rounds": 3, "min_time_s": 0.02},
        "benchmarks": benchmarks,
        **extra,
    }


def drifting(base_us: float, process: int) -> list[float]:
    """Seconds per call over 3 rounds of one process, at the machine's drifting speed."""
    return [base_us * 1e-6 * speed for speed in DRIFT[process * 3 : process * 3 + 3]]


def synthetic_runs() -> list[dict[str, Any]]:
    """Two processes per environment: in v1, validate costs 4x the baseline in every round; in
    v2, 0.5x. Encoders: orjson 0.1x. Container: marshal encodes in 0.5x, decodes in 2x."""
    runs = []
    for process in range(2):
        for arm, validate in (("v1", 4.0), ("v2", 0.5)):
            runs.append(
                raw_run(
                    arm,
                    process,
                    (PYDANTIC_GROUP,),
                    [
                        raw_benchmark(
                            "pydantic", "validate", "plain_json", drifting(1000 * validate, process)
                        ),
                        raw_benchmark(
                            "pydantic", "plain_json", "plain_json", drifting(1000, process)
                        ),
                    ],
                )
            )
        container = {
            "records": 2000,
            "formats": {
                "pickle_highest": {"label": "pickle, protocol 5", "bytes": 200, "zlib_bytes": 40},
                "marshal": {"label": "marshal", "bytes": 270, "zlib_bytes": 48},
            },
        }
        runs.append(
            raw_run(
                "v2",
                process,
                SHARED_GROUPS,
                [
                    raw_benchmark(
                        "encoders", "json_default", "json_default", drifting(800, process)
                    ),
                    raw_benchmark(
                        "encoders", "orjson_native", "json_default", drifting(80, process)
                    ),
                    *(
                        raw_benchmark(
                            "container",
                            f"{form}.{operation}",
                            f"pickle_highest.{operation}",
                            drifting(2000 * factor, process),
                            format=form,
                            operation=operation,
                        )
                        for form, operation, factor in (
                            ("pickle_highest", "encode", 1.0),
                            ("pickle_highest", "decode", 1.0),
                            ("marshal", "encode", 0.5),
                            ("marshal", "decode", 2.0),
                        )
                    ),
                ],
                container=container,
            )
        )
    return runs


SHAPE_NAMES = ("union_none", "union_plain", "union_tagged", "rows_adapter", "rows_parse_obj_as")


def test_plan_jobs_times_pydantic_everywhere_and_the_shared_groups_once_per_process() -> None:
    jobs = plan_jobs(("v1", "v2"), processes=2)
    per_arm = ("pydantic", "shapes")  # every group that goes through the arm's Pydantic
    assert jobs == [
        MicroJob("v1", per_arm, 0),
        MicroJob("v2", per_arm, 0),
        MicroJob("v2", SHARED_GROUPS, 0),
        MicroJob("v2", per_arm, 1),  # the arms' order alternates
        MicroJob("v1", per_arm, 1),
        MicroJob("v2", SHARED_GROUPS, 1),
    ]
    assert MicroJob("v2-latest", ("pydantic",), 0).package == "app_v2"
    assert MicroJob("v2-latest", ("pydantic",), 0).environment == "app_v2_latest"


def test_paired_ratios_pair_by_round_and_skip_rounds_without_a_baseline() -> None:
    seconds = {(0, 0): 2.0, (0, 1): 6.0, (1, 0): 1.0}
    baseline = {(0, 0): 1.0, (0, 1): 2.0}
    assert paired_ratios(seconds, baseline) == [2.0, 3.0]


def test_summarise_pairs_every_round_with_its_baseline_so_drift_cancels() -> None:
    micro = summarise(synthetic_runs())
    assert list(micro["groups"]) == ["pydantic", "encoders", "container"]
    pydantic = micro["groups"]["pydantic"]
    validate = pydantic["arms"]["v1"]["benchmarks"]["validate"]
    # The time itself drifts (the median of 6 drifting rounds) ...
    assert validate["us_per_call"] == pytest.approx(4000 * 1.05)
    assert validate["stdev_us"] > 800
    assert validate["samples"] == 6
    # ... the paired ratio does not: 4x in every round, an interval of exactly 4x.
    ratio = validate["ratio_to_baseline"]
    assert ratio["estimate"] == pytest.approx(4.0)
    assert (ratio["ci95_low"], ratio["ci95_high"]) == (pytest.approx(4.0), pytest.approx(4.0))
    assert ratio["pairs"] == 6
    baseline = pydantic["arms"]["v1"]["benchmarks"]["plain_json"]
    assert baseline["is_baseline"] and baseline["ratio_to_baseline"]["estimate"] == 1.0
    assert pydantic["baselines"] == ["plain_json"]
    # v2's time over v1's, through each one's own baseline.
    across = pydantic["across_arms"]
    assert across["reference"] == "v1"
    speedup = across["speedup_over_reference"]["v2"]["validate"]
    assert speedup["estimate"] == pytest.approx(8.0) and speedup["pairs"] == 6
    assert (speedup["ci95_low"], speedup["ci95_high"]) == (pytest.approx(8.0), pytest.approx(8.0))
    encoders = micro["groups"]["encoders"]
    assert list(encoders["arms"]) == ["v2"] and "across_arms" not in encoders
    orjson = encoders["arms"]["v2"]["benchmarks"]["orjson_native"]
    assert orjson["ratio_to_baseline"]["estimate"] == pytest.approx(0.1)
    container = micro["groups"]["container"]
    decode = container["arms"]["v2"]["benchmarks"]["marshal.decode"]
    assert decode["ratio_to_baseline"]["estimate"] == pytest.approx(2.0)
    assert (decode["format"], decode["operation"]) == ("marshal", "decode")
    assert container["formats"]["marshal"]["zlib_bytes"] == 48


def test_summarise_refuses_a_group_without_its_baseline() -> None:
    runs = [
        raw_run(
            "v1",
            0,
            ("pydantic",),
            [raw_benchmark("pydantic", "validate", "plain_json", drifting(10, 0))],
        )
    ]
    with pytest.raises(LabError, match="no baseline plain_json"):
        summarise(runs)


def test_tables_show_times_ratios_with_their_intervals_and_the_baseline() -> None:
    micro = summarise(synthetic_runs())
    groups = micro["groups"]
    header, rows = pydantic_rows(groups["pydantic"])
    assert header == [
        "path",
        "v1 µs ± sd",
        "v1 vs baseline",
        "v2 µs ± sd",
        "v2 vs baseline",
        "v1 ÷ v2 [95% CI]",
    ]
    validate, plain = rows
    assert validate[0] == "validate"
    assert validate[1].startswith("4,200 ± ")
    assert validate[2] == "4.00x [4.00–4.00]"
    assert validate[4] == "0.50x [0.50–0.50]"
    assert validate[5] == "8.00x [8.00–8.00]"  # v2 is 8 times faster
    assert plain[2] == plain[4] == "baseline" and plain[5] == "–"
    assert "baseline: plain json (plain Python)" in table_title("pydantic", groups["pydantic"])
    _, encoder_table = encoder_rows(groups["encoders"])
    assert [row[2] for row in encoder_table] == ["baseline", "0.10x [0.10–0.10]"]
    header, container_table = container_rows(groups["container"])
    assert header[-2:] == ["bytes", "zlib bytes"]
    assert container_table[1][1:] == [
        "1,050 ± 240",
        "0.50x [0.50–0.50]",
        "4,200 ± 961",
        "2.00x [2.00–2.00]",
        "270",
        "48",
    ]
    assert "pickle, protocol 5, the study's starting point" in table_title(
        "container", groups["container"]
    )


def test_report_holds_the_three_tables(tmp_path: Path) -> None:
    results = {
        "started_at": "2026-11-23T10:00:00+00:00",
        "finished_at": "2026-11-23T10:01:00+00:00",
        "elapsed_s": 60.0,
        "host": {"cpu_model": "a CPU", "cores_available": 2, "os": "Linux"},
        "settings": {
            "quick": True,
            "processes": 2,
            "rounds": 3,
            "pairs_per_benchmark": 6,
            "min_time_s": 0.02,
            "pinning": {"note": "on CPU 1", "cpus": [1]},
        },
        "micro": summarise(synthetic_runs()),
    }
    text = write_report(tmp_path, results).read_text()
    assert text.count("\n## ") == 3
    assert "| validate | 4,200 ± " in text
    assert "| marshal | 1,050 ± 240 | 0.50x [0.50–0.50] |" in text


def microbench(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arm_python("v2")), "-m", "commons.probes.microbench", *arguments],
        capture_output=True,
        text=True,
        cwd=REPOSITORY_ROOT,
        timeout=120,
    )


def test_microbench_runs_every_benchmark_in_app_v2s_environment(tmp_path: Path) -> None:
    output = tmp_path / "raw.json"
    completed = microbench(
        "--app",
        "app_v2",
        "--rounds",
        "2",
        "--min-time",
        "0.002",
        "--process",
        "1",
        "--output",
        str(output),
    )
    assert completed.returncode == 0, completed.stderr
    raw = json.loads(output.read_text())
    assert raw["app"] == "app_v2" and raw["process"] == 1
    assert raw["versions"]["pydantic"].startswith("2.")
    assert raw["settings"]["gc_enabled_during_timing"] is True
    names = {(b["group"], b["name"]) for b in raw["benchmarks"]}
    assert names == {
        *(("pydantic", name) for name in PYDANTIC_NAMES),
        *(("encoders", name) for name in ENCODER_NAMES),
        *(
            ("container", f"{form}.{operation}")
            for form in CONTAINER_FORMATS
            for operation in ("encode", "decode")
        ),
        *(("shapes", name) for name in SHAPE_NAMES),
    }
    for benchmark in raw["benchmarks"]:
        assert benchmark["loops_per_measurement"] >= 1
        assert [sample["round"] for sample in benchmark["samples"]] == [0, 1]
        assert all(sample["seconds_per_call"] > 0 for sample in benchmark["samples"])
    formats = raw["container"]["formats"]
    assert raw["container"]["records"] == 2000
    assert set(formats) == set(CONTAINER_FORMATS)
    for facts in formats.values():
        assert 0 < facts["zlib_bytes"] < facts["bytes"]
        assert facts["roundtrip"].startswith("identical")
    # What the runner makes of it: every group, a ratio for every benchmark.
    micro = summarise([{"arm": "v2", "environment": "app_v2", **raw}])
    for summary in micro["groups"].values():
        for figures in summary["arms"]["v2"]["benchmarks"].values():
            assert figures["ratio_to_baseline"]["pairs"] == 2


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--app", "app_v2", "--rounds", "0"], "--rounds"),
        (["--app", "app_v2", "--groups", "everything"], "--groups"),
        (["--rounds", "1"], "--app"),
        (["--app", "no_such_app", "--rounds", "1"], "no_such_app"),
    ],
)
def test_microbench_refuses_bad_arguments_in_one_line(
    arguments: list[str], message: str, tmp_path: Path
) -> None:
    completed = microbench(*arguments, "--output", str(tmp_path / "raw.json"))
    assert completed.returncode != 0
    assert completed.stdout == ""
    assert len(completed.stderr.strip().splitlines()) == 1, completed.stderr
    assert message in completed.stderr
    assert not (tmp_path / "raw.json").exists()
