"""The other modes: --docker without an engine, `dataset`, and locust's distributed mode."""

import json
import shutil
import subprocess

import psycopg
import pytest

from commons.embedded_postgres import embedded_postgres
from tests.runner import TINY_RUN, free_port, lab_processes, run_runner


def docker_engine_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0


@pytest.mark.skipif(docker_engine_answers(), reason="a Docker engine answers on this machine")
def test_docker_mode_without_an_engine_is_one_line_and_writes_nothing(tmp_path) -> None:
    result = run_runner("--docker", "--quick", "--results-dir", str(tmp_path / "results"))
    assert result.returncode == 1
    assert result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("./test.sh: error: --docker")
    assert "plain ./test.sh needs no Docker" in line
    assert not (tmp_path / "results").exists()


def test_dataset_mode_loads_the_same_rows_every_time() -> None:
    with embedded_postgres() as server:
        for _ in range(2):  # a second load replaces, never appends
            result = run_runner("dataset", "--dataset", "150", DATABASE_URL=server.url)
            assert result.returncode == 0, result.stderr
            assert "Loaded 150 posts." in result.stdout
        with psycopg.connect(server.url) as connection:
            row = connection.execute("SELECT count(*), min(id), max(id) FROM posts").fetchone()
            titles = connection.execute("SELECT title FROM posts ORDER BY id LIMIT 2").fetchall()
    assert row == (150, 1, 150)
    assert [title for (title,) in titles] == ["Post number 1", "Post number 2"]


def test_dataset_mode_needs_database_url() -> None:
    result = run_runner("dataset")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "./test.sh: error: the dataset mode loads into DATABASE_URL, which is not set"
    )


def test_distributed_locust_gives_the_same_complete_results(tmp_path) -> None:
    before = lab_processes()
    result = run_runner(
        *TINY_RUN, "--repeats", "1", "--load-processes", "2", "--results-dir", str(tmp_path),
        "--port-v1", str(free_port()), "--port-v2", str(free_port()),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    results = json.loads((tmp_path / "latest" / "results.json").read_text())
    assert results["settings"]["load_processes"] == 2
    assert results["load_generator"]["load_processes"] == 2
    for app in ("v1", "v2"):
        for name, scenario in results["apps"][app]["scenarios"].items():
            assert scenario["rps_median"] > 0 and scenario["failures"] == 0, (app, name)
        [write_run] = results["apps"][app]["scenarios"]["write"]["runs"]
        assert write_run["acknowledged_writes"] == write_run["new_rows"] > 0
    log = (tmp_path / "latest" / "runs" / "01-v1" / "read.log").read_text()
    assert "2 workers connected" in log
    assert lab_processes() - before == set()
