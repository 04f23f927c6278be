"""results.json: version and kind first, and the files of earlier versions read by upgrading
them in memory."""

import json
from pathlib import Path

import pytest

from harness_tests.factories import build, steady_runs
from loadtest.lab.errors import LabError
from loadtest.modes.registry import KINDS
from loadtest.output.results_file import SCHEMA_VERSION, read_results, write_results


def write_raw(run_dir: Path, document: dict) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "results.json").write_text(json.dumps(document))
    return run_dir


def test_version_and_kind_come_first(tmp_path: Path) -> None:
    written = write_results(tmp_path, "micro", {"micro": {}})
    text = (tmp_path / "results.json").read_text()
    assert list(json.loads(text))[:2] == ["schema_version", "kind"]
    assert written == {"schema_version": SCHEMA_VERSION, "kind": "micro", "micro": {}}
    assert read_results(tmp_path, KINDS) == written  # the current version is read as it is


def test_a_version_3_benchmark_reads_as_the_current_version(tmp_path: Path) -> None:
    current = build(steady_runs())
    old = json.loads(json.dumps(current))
    old["schema_version"] = 3
    del old["kind"]
    ratio = old["ratios_vs_baseline"]["read"]["v2"]
    ratio["ratio"] = ratio.pop("estimate")
    for entry in ratio["per_repeat"]:
        entry["ratio"] = entry.pop("estimate")
    upgraded = read_results(write_raw(tmp_path / "run", old), KINDS)
    assert upgraded["kind"] == "benchmark" and upgraded["upgraded_from"] == 3
    assert upgraded["ratios_vs_baseline"] == current["ratios_vs_baseline"]


def test_ladder_and_micro_runs_from_before_versions_read_in_the_one_spelling(
    tmp_path: Path,
) -> None:
    ladder = {
        "kind": "ladder",
        "ladder": {
            "v2": {
                "floor": {
                    "speedup": {
                        "median": 4.0,
                        "ci95_low": 3.9,
                        "ci95_high": 4.1,
                        "ci95_half_width": 0.025,
                        "pairs": 20,
                    }
                }
            }
        },
        "comparisons": {
            "v2_over_v1": {
                "floor": {"ratio": 1.0, "ci95_low": 0.98, "ci95_high": 1.02, "pairs": 20}
            }
        },
    }
    read = read_results(write_raw(tmp_path / "ladder", ladder), KINDS)
    assert (read["schema_version"], read["upgraded_from"]) == (SCHEMA_VERSION, 1)
    assert read["ladder"]["v2"]["floor"]["speedup"]["estimate"] == 4.0
    assert read["comparisons"]["v2_over_v1"]["floor"]["estimate"] == 1.0
    micro = {
        "kind": "micro",
        "ratio_to_baseline": {"ratio": 0.5, "ci_low": 0.4, "ci_high": 0.6, "pairs": 32},
    }
    read = read_results(write_raw(tmp_path / "micro", micro), KINDS)
    assert read["ratio_to_baseline"] == {
        "estimate": 0.5,
        "ci95_low": 0.4,
        "ci95_high": 0.6,
        "pairs": 32,
    }


@pytest.mark.parametrize(
    ("kind", "old_arm", "arm", "variant"),
    [
        ("ladder", "v2/plain_orjson", "v2", "plain_orjson"),
        ("sweep", "nested-1000@v2-latest", "v2-latest", "nested-1000"),
        ("benchmark", "v1-shim", "v1-shim", None),
        ("ladder", "v2", "v2", None),
    ],
)
def test_a_version_4_run_reads_with_a_windows_arm_and_variant_apart(
    tmp_path: Path, kind: str, old_arm: str, arm: str, variant: str | None
) -> None:
    old = {
        "schema_version": 4,
        "kind": kind,
        "started_at": "2026-11-24T10:00:00+00:00",
        "finished_at": "2026-11-24T10:05:30.5+00:00",
        "windows": [{"arm": old_arm, "rps": 10.0}],
    }
    read = read_results(write_raw(tmp_path / kind, old), KINDS)
    assert read["windows"] == [{"arm": arm, "variant": variant, "rps": 10.0}]
    assert read["elapsed_s"] == 330.5  # the header every version-5 file has


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"schema_version": 6, "kind": "benchmark"}, "a newer file needs a newer lab"),
        ({"schema_version": 4, "kind": "sweep-of-the-future"}, "of the kinds benchmark, ladder"),
        ({"apps": {}}, "has schema_version None and kind None"),
        ([1, 2], "is not a results file (no JSON object)"),
    ],
)
def test_files_this_version_cannot_read_are_one_line(
    tmp_path: Path, document: object, message: str
) -> None:
    (tmp_path / "results.json").write_text(json.dumps(document))
    with pytest.raises(LabError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_results(tmp_path, KINDS)
