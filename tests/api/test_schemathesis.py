"""Schemathesis over every arm's own OpenAPI, with all its checks and a fixed seed: no 5xx, every
status, header and body as documented, schema-valid input accepted and invalid input refused,
apart from the pinned differences between the majors (tests/fuzzing/hooks.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from commons.arms import ARMS
from tests.app_processes import APP_NAMES, REPOSITORY_ROOT, RunningApp

FUZZING = REPOSITORY_ROOT / "tests" / "fuzzing"
SEED = 20261123
# About 22 s per arm on the 2-vCPU machines alone: about 520 requests each, in four phases
# (examples, coverage, fuzzing, and stateful sequences that follow the inferred links); cases
# per operation are set in tests/fuzzing/schemathesis.toml. Each arm's seed is SEED plus its
# place in APP_NAMES: fixed, so a failure reproduces, and different, so the routes every arm
# shares (commons) meet other cases in each.
# Every phase runs once per app package, on the first arm that serves it (v1, v2): the coverage
# phase (every bound and type of every parameter, the same cases whatever the seed) and the
# stateful one (create, read, update and delete along the links: the CRUD of commons, which
# tests/api/test_posts.py also walks on every arm). An arm serving the same code on other
# installed packages (v1-shim, v2-latest) gets the fuzzing phase, with its own seed: its own
# Pydantic or FastAPI meets random input of its own, at a third of the CPU of the four phases
# (almost all of it schemathesis' own, generating cases).


def phases(arm: str) -> str:
    """Every phase on the first arm of each app package; the fuzzing phase on its twins."""
    first_of_its_code = next(name for name in APP_NAMES if ARMS[name].package == ARMS[arm].package)
    return "examples,coverage,fuzzing,stateful" if arm == first_of_its_code else "fuzzing"


def schemathesis_command(app: RunningApp) -> list[str]:
    cli = Path(sys.executable).parent / "st"  # the commons environment's, where pytest runs
    return [
        str(cli),
        "--no-color",
        "--config-file",
        str(FUZZING / "schemathesis.toml"),
        "run",
        f"{app.base_url}/openapi.json",
        "--phases",
        phases(app.name),
        "--checks",
        "all",
        "--seed",
        str(SEED + APP_NAMES.index(app.name)),
        "--workers",
        "1",
        "--request-timeout",
        "30",
        "--continue-on-failure",
        # Hypothesis's "data generation is too slow" check times the generator: on two CPUs
        # shared with the rest of the suite it fails for the machine's load, not the schema.
        "--suppress-health-check",
        "too_slow",
    ]


@pytest.mark.timeout(600)
def test_schemathesis_finds_nothing_but_pinned_differences(app: RunningApp) -> None:
    environment = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "tests.fuzzing.hooks",
        "PYTHONPATH": str(REPOSITORY_ROOT),
    }
    result = subprocess.run(
        schemathesis_command(app),
        cwd=REPOSITORY_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=540,
    )
    # The report's summary, and each failure with its curl line to reproduce it.
    # One string, which pytest prints whole (a tuple would be cut to a line).
    assert result.returncode == 0, f"{result.stdout[-20_000:]}\n{result.stderr[-2_000:]}"
    assert "Test cases:" in result.stdout, result.stdout[-2_000:]


def test_the_coverage_and_stateful_phases_run_once_for_each_app_package() -> None:
    for phase in ("coverage", "stateful"):
        covered = [arm for arm in APP_NAMES if phase in phases(arm)]
        assert sorted(ARMS[arm].package for arm in covered) == sorted(
            {a.package for a in ARMS.values()}
        )
    assert all("fuzzing" in phases(arm) for arm in APP_NAMES)
