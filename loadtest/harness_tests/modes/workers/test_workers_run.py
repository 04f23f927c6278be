"""`./test.sh workers` run for real with the shortest timetable that takes every step (one arm,
a 2-model app, 2 and 3 workers under uvicorn and gunicorn --preload with gc.freeze, one round,
the limit check with one second of load): results.json, the proof that every worker served
every route, the reports, the rebuild; one-line errors; nothing left running after success,
failure or Ctrl-C."""

import json
from pathlib import Path

import pytest

from harness_tests.runner import (
    interrupted_run,
    lab_processes,
    leftover_processes,
    only_run,
    port_options,
    run_in_process,
    run_runner,
)
from loadtest.lab.cgroup import memory_controller
from loadtest.modes.workers.results import METRICS

ROOMY_BOUND = ["--bound", "300"]
SHORTEST = [
    "workers",
    "--apps",
    "v2",
    "--models",
    "2",
    "--workers",
    "2,3",
    "--servers",
    "uvicorn,gunicorn-preload-freeze",
    "--rounds",
    "1",
    "--limits",
    "192",
    "--check-limit",
    # 4 workers predicted (a 40 MiB master, 13 MiB a worker): 160 MiB held 9, and warming
    # every route in 9 workers took 39 s of the run's 55 alone, 4 take 8 s.
    "96",
    "--load",
    "1",
    # The tests ask whether every worker served every route, not how soon: beside the other
    # tests on two CPUs, a tree once took longer than the default 60 s (its sample then is
    # "unfinished", a result, not a failure of the mode), so the bound is far from any load.
    *ROOMY_BOUND,
]


def lab_cgroups() -> list[Path]:
    found = memory_controller()
    return sorted(found[0].glob("lab-workers-*")) if found else []


def test_a_real_workers_run_proves_every_worker_served_every_route(tmp_path: Path) -> None:
    before = lab_processes()
    result = run_runner(*SHORTEST, *port_options(), "--results-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert leftover_processes(before) == {}
    assert lab_cgroups() == []
    run_dir = only_run(tmp_path)
    assert run_dir.name.endswith("-workers")
    results = json.loads((run_dir / "results.json").read_text())
    assert results["kind"] == "workers"
    workers = results["workers"]
    assert len(workers["raw"]) == 4  # 2 servers × 2 worker counts × 1 round
    for sample in workers["raw"]:
        assert "unfinished" not in sample, sample
        pids = sample["worker_pids"]
        assert len(pids) == sample["workers"] == len(set(pids))
        # Every worker answered every route: the PIDs the answers named, per route.
        assert sample["routes"] == 4  # 2 models, a GET and a POST each
        assert sample["routes_answered_by"] == {str(pid): 4 for pid in pids}
        assert sample["warm_requests"] >= 4 * len(pids)
        assert sample["pss_collected_mib"] > 0 and sample["rss_sum_collected_mib"] > 0
        assert sample["versions"]["pydantic"].startswith("2.")
        # The tree: the master (uvicorn's supervisor, with multiprocessing's resource
        # tracker beside it; gunicorn's arbiter) and the workers, read one by one.
        others = 2 if sample["server"] == "uvicorn" else 1
        assert sample["processes_collected"] == sample["workers"] + others
    two = workers["figures"]["2 models"]["v2 uvicorn ×2"]
    assert set(METRICS) <= set(two) and two["pss_idle_mib"]["samples"] == 1
    fit = workers["fits"]["2 models"]["v2 gunicorn-preload-freeze"]
    assert fit["per_worker_mib"] > 0 and fit["workers_in"]["192"] >= 1
    [check] = workers["limit_checks"]
    # The check's limit is not among --limits: it is read off the line.
    assert (check["server"], check["limit_mib"]) == ("gunicorn-preload-freeze", 96)
    if check["outcome"].startswith("not run"):  # no cgroup can be made here: it says why
        assert memory_controller() is None or "cgroup" in check["outcome"]
    else:
        first = check["attempts"][0]
        assert first["workers"] == min(check["predicted"], 32)
        for attempt in check["attempts"]:
            held = attempt["outcome"] == "stayed up"
            assert held == (
                "failure" not in attempt
                and attempt["oom_kills"] == attempt["restarted"] == attempt["failed"] == 0
            )
            assert attempt["peak_mib"] is None or attempt["peak_mib"] <= 96 + 1
        assert check["held"] in (None, check["attempts"][-1]["workers"])
    assert "2 models: the most workers that fit: in 192 MiB, v2" in result.stdout
    assert (run_dir / "workers.svg").read_text().count("<svg") == 1
    assert "PSS collected" in (run_dir / "report.md").read_text()

    (run_dir / "report.md").unlink()
    rebuilt = run_in_process("report", str(run_dir), "--results-dir", str(tmp_path))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "workers that fit" in (run_dir / "report.md").read_text()


def test_a_run_where_nothing_finishes_fails_in_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    before = lab_processes()
    result = run_runner(
        "workers",
        "--apps",
        "v2",
        "--models",
        "2000",
        "--workers",
        "2",
        "--servers",
        "uvicorn",
        "--rounds",
        "1",
        "--no-limit-check",
        "--bound",
        "5",
        *port_options(),
        "--results-dir",
        str(tmp_path),
    )
    assert result.returncode == 1
    assert "v2 uvicorn ×2: over 5 s" in result.stdout
    assert result.stderr.strip().endswith("no subject finished in any round: nothing to report")
    assert leftover_processes(before) == {}


def test_ctrl_c_mid_run_stops_every_worker(tmp_path: Path) -> None:
    before = lab_processes()
    returncode, stderr = interrupted_run(
        "workers",
        "--apps",
        "v2",
        "--models",
        "2",
        "--workers",
        "2",
        "--servers",
        "gunicorn-preload",
        "--rounds",
        "500",
        "--no-limit-check",
        *port_options(),
        "--results-dir",
        str(tmp_path),
        once_started="commons.probes.workers:app",  # a server: the workers mode's wrapper
        within_s=60,
    )
    assert returncode == 130
    assert "Traceback" not in stderr
    assert leftover_processes(before) == {}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--workers", "0"], "0 workers: choose 1 to 32"),
        (["--workers", "2,two"], "'two' is not a whole number"),
        (["--workers", "2,2"], "names a number twice"),
        (["--servers", "gunicorn,nginx"], "nginx"),
        (["--limits", "10"], "10 MiB: choose 64 to"),
        (["--rounds", "0"], "--rounds"),
        (["--check-limit", "512", "--no-limit-check"], "not allowed with argument"),
        (["--load", "0"], "between 1 and 600 seconds"),
    ],
)
def test_workers_option_errors_are_one_line(arguments: list[str], message: str) -> None:
    result = run_in_process("workers", *arguments)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--workers", "1,2"], "the fit and its limit check need two worker counts of 2 or more"),
        (["--only-lab-app", "--models", "10"], "--only-lab-app serves no generated app"),
        (["--check-limit", "512,1024"], "--check-limit takes one limit"),
        (["--models", "3000"], "--models 3000: the service shape takes at most 2000 models"),
    ],
)
def test_settings_that_cannot_run_are_one_line(arguments: list[str], message: str) -> None:
    result = run_in_process("workers", *arguments)
    assert result.returncode == 1
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_the_lab_app_preloaded_serves_every_route_from_every_worker(tmp_path: Path) -> None:
    """The lab's own app under gunicorn --preload: it opens a database connection at import, in
    the master; each worker forgets it (post_fork) and serves READ, READ synthetic and WRITE
    over its own."""
    before = lab_processes()
    result = run_runner(
        "workers",
        "--only-lab-app",
        "--apps",
        "v2",
        "--workers",
        "2,3",
        "--servers",
        "gunicorn-preload",
        "--rounds",
        "1",
        "--no-limit-check",
        *ROOMY_BOUND,
        *port_options(),
        "--results-dir",
        str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert leftover_processes(before) == {}
    workers = json.loads((only_run(tmp_path) / "results.json").read_text())["workers"]
    assert [sample["target"] for sample in workers["raw"]] == ["lab", "lab"]
    for sample in workers["raw"]:
        assert "unfinished" not in sample, sample
        assert sample["routes_answered_by"] == {str(pid): 5 for pid in sample["worker_pids"]}
