"""`./test.sh losses RUN_DIR...` reads runs and lists where Pydantic 2 costs more: only what two
runs show, worst first, counting what it examined; one line for what it cannot read."""

import json
from pathlib import Path
from typing import Any

import pytest

from loadtest.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runs"


def copy_run(kind: str, folder: Path, change: Any) -> Path:
    results = json.loads((FIXTURES / kind / "results.json").read_text())
    change(results)
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(results))
    return folder


def losing(low: float, high: float) -> dict[str, Any]:
    estimate = (low + high) / 2
    return {
        "estimate": estimate,
        "ci95_low": low,
        "ci95_high": high,
        "ci95_half_width": (high - low) / 2 / estimate,
        "pairs": 6,
        "pair_min": low,
        "pair_max": high,
        "flags": [],
    }


def scale_change(results: dict[str, Any], *, once: bool) -> None:
    scale = results["scale"]
    # v2 holds more memory at 500 models in both runs; its /openapi.json does not finish.
    scale["ratios"]["v2/v1"]["by_models"]["500"]["rss_idle_mib"] = losing(1.2, 1.4)
    for metric in ("openapi_s", "rss_openapi_mib"):
        scale["figures"]["v2"]["500"][metric] = {"median": None, "unfinished": "over 60 s"}
    if once:  # a loss a second run does not show
        scale["ratios"]["v2-latest/v1"]["by_models"]["10"]["import_s"] = losing(1.05, 1.15)
    # A variant over its own arm is not a comparison of the majors, however it lies.
    scale["ratios"]["v2+defer_build/v2"]["by_models"]["10"]["import_s"] = losing(3.0, 4.0)


def sweep_change(results: dict[str, Any]) -> None:
    gain = results["cells"][0]["gains"]["v2/v1"]
    gain.update(by="rps", estimate=0.5, ci95_low=0.45, ci95_high=0.55)


def test_only_losses_two_runs_show_are_listed_worst_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [
        copy_run("scale", tmp_path / "scale-a", lambda r: scale_change(r, once=True)),
        copy_run("scale", tmp_path / "scale-b", lambda r: scale_change(r, once=False)),
        copy_run("sweep", tmp_path / "sweep-a", sweep_change),
        copy_run("sweep", tmp_path / "sweep-b", sweep_change),
        FIXTURES / "benchmark",
    ]
    assert main(["losses", *map(str, runs)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    examined = json.loads((FIXTURES / "scale" / "results.json").read_text())
    majors = [name for name in examined["scale"]["ratios"] if name.endswith("/v1")]
    scale_figures = len(majors) * 3 * len(examined["scale"]["metrics"])
    sweep_cells = json.loads((FIXTURES / "sweep" / "results.json").read_text())["cells"]
    sweep_figures = sum(name.endswith("/v1") for cell in sweep_cells for name in cell["gains"])
    # v2's two figures of /openapi.json at 500 models are one: the phase that did not finish.
    assert f"{scale_figures - 1 + sweep_figures} figures examined in 4 runs" in out
    assert "Pydantic 2 costs more in 3 of them in two runs or more" in out
    assert "1 more lost in one run only" in out
    assert "Not read (no figures of v2 against v1 here): benchmark (benchmark)" in out
    # Worst first: did not finish, then half the r/s (2x the time), then 1.3x the memory.
    unfinished = out.index("did not finish")
    slower = out.index("2.00x [1.82–2.22]")
    memory = out.index("1.30x [1.20–1.40]")
    once = out.index("Lost in one run only")
    assert unfinished < slower < memory < once < out.index("1.10x [1.05–1.15]")
    assert "3.50x" not in out


def test_markdown_prints_the_readme_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [
        copy_run("sweep", tmp_path / "a", sweep_change),
        copy_run("sweep", tmp_path / "b", sweep_change),
    ]
    assert main(["losses", "--markdown", *map(str, runs)]) == 0
    out = capsys.readouterr().out
    assert "| shape | figure | measure |" in out
    assert "| sweep request path | flat-1 (GET, 397 B) | time per request, v2/v1 |" in out
    assert main(["losses", "--markdown", "--summary", *map(str, runs)]) == 0
    summary = capsys.readouterr().out
    assert "| sweep request path | flat-1 (GET, 397 B) | time per request | 2.00x | v2 |" in summary


def test_runs_it_cannot_read_get_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["losses", str(FIXTURES / "benchmark")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("./test.sh: error: none of these runs is of a kind the losses read")
    assert len(err.splitlines()) == 1
    assert main(["losses", str(tmp_path / "nowhere")]) == 1
    assert "is not a directory" in capsys.readouterr().err
