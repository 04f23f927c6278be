"""The harness's tests: the modules with real runs go to the pytest-xdist workers first, so the
longest ones do not start last and leave a worker idle at the end."""

import pytest

# Longest first: each holds one or more real runs of the harness (a minute or two each).
REAL_RUN_MODULES = (
    "test_end_to_end.py",
    "test_options.py",
    "test_errors_and_teardown.py",
    "test_ladder.py",
    "test_latency_run.py",
    "test_shapes.py",
    "test_one_run_at_a_time.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return REAL_RUN_MODULES.index(name) if name in REAL_RUN_MODULES else len(REAL_RUN_MODULES)

    items.sort(key=rank)  # stable: the order within a module stays
