"""The harness's tests: the modules with real runs go to the pytest-xdist workers first, so the
longest ones do not start last and leave a worker idle at the end; tests marked `alone` are left
out of the workers (scripts/run_tests.sh runs them in a serial pass, docs/testing.md)."""

import os

import pytest

# Longest first: each holds one or more real runs of the harness (half a minute to two each,
# measured inside the suite: docs/testing.md).
REAL_RUN_MODULES = (
    "test_options.py",  # the distributed run with --fit and the wrk cross-check: 150 s
    "test_end_to_end.py",
    "test_latency_run.py",
    "test_errors_and_teardown.py",
    "test_shapes.py",
    "test_ladder.py",
    "test_workers_run.py",
    "test_sweep_run.py",
    "test_one_run_at_a_time.py",
    "test_compare_run.py",
    "test_versions_run.py",
    "test_scale_run.py",
    "test_generator.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # a figure measured beside other tests means little
        alone = [item for item in items if item.get_closest_marker("alone")]
        config.hook.pytest_deselected(items=alone)
        items[:] = [item for item in items if not item.get_closest_marker("alone")]

    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return REAL_RUN_MODULES.index(name) if name in REAL_RUN_MODULES else len(REAL_RUN_MODULES)

    items.sort(key=rank)  # stable: the order within a module stays
