"""The harness's tests: the longest modules go to the pytest-xdist workers first, real runs
between modules that only compute (SCHEDULE); tests marked `alone` are left out of the workers
(scripts/run_tests.sh runs them in a serial pass, docs/testing.md)."""

import os

import pytest

# The order the modules go to the pytest-xdist workers: longest first, so the longest do not
# start last and leave workers idle at the end, and the real runs (half a minute to two each,
# measured inside the suite: docs/testing.md) alternate with modules that only compute (started
# apps unpinned, charts, environments built). A real run pins its apps to CPU 1 and its load,
# database and runner to CPU 0: four real runs at once kept one CPU full and the other idle a
# third of the time, where a module that computes takes whichever CPU is free.
SCHEDULE = (
    "test_options.py",  # the distributed run with --fit and the wrk cross-check
    "test_generator.py",  # every generated app started in every arm, unpinned
    "test_end_to_end.py",
    "test_latency_run.py",
    "test_chart_legends.py",
    "test_scenario_families.py",
    "test_compare_run.py",
    "test_derived_environments.py",
    "test_errors_and_teardown.py",
    "test_rebuild_old_runs.py",
    "test_workers_run.py",
    "test_shapes.py",
    "test_latency.py",
    "test_ladder.py",
    "test_scale_run.py",
    "test_hostile_strings.py",
    "test_versions_run.py",
    "test_sweep_run.py",
    "test_html.py",
    "test_one_run_at_a_time.py",
    "test_up.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # a figure measured beside other tests means little
        alone = [item for item in items if item.get_closest_marker("alone")]
        config.hook.pytest_deselected(items=alone)
        items[:] = [item for item in items if not item.get_closest_marker("alone")]

    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return SCHEDULE.index(name) if name in SCHEDULE else len(SCHEDULE)

    items.sort(key=rank)  # stable: the order within a module stays
