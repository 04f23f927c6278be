#!/usr/bin/env bash
# The test suite: bootstrap uv and the locked environments, lint and type-check, then run every
# test against a real PostgreSQL (embedded by default; set DATABASE_URL to use your own server).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  cat <<'USAGE'
usage: ./scripts/run_tests.sh [PYTEST OPTIONS]

The lab's test suite, as CI runs it (.ci/run):
  1. bootstrap: uv (installed into .tools/uv if missing) and every locked environment;
  2. lint: ruff check, ruff format --check, and mypy over commons/ and loadtest/;
  3. tests/: commons and every arm (API contract, validation, limits, durability,
     schemathesis, /docs in Chromium), against a real PostgreSQL;
  4. loadtest/harness_tests/: the benchmark harness, with a few short real runs.
About 10 minutes on a 2-CPU machine, chromium installed (as CI does). Tests that need
Debian's chromium or wrk are skipped where those are missing (.ci/run installs them); the
slowest tests are listed at the end.

Options are passed to both pytest runs (after the script's own -n, parallel workers), e.g.:
  ./scripts/run_tests.sh -x                 stop at the first failure
  ./scripts/run_tests.sh -k ladder          only tests whose name matches
  ./scripts/run_tests.sh -n 0               one process, no parallel workers
  DATABASE_URL=postgresql://... ./scripts/run_tests.sh   against your own server
USAGE
  exit 0
fi

source scripts/bootstrap.sh

echo "== lint: ruff (check and format) and mypy"
uv run --locked --project commons ruff check .
uv run --locked --project commons ruff format --check .
uv run --locked --project loadtest mypy

# pytest-xdist workers: most tests wait on real servers and on fixed-length load windows, not on
# the CPU. In tests/, loadgroup spreads the tests one by one (schemathesis' four long runs among
# them) but keeps a module marked xdist_group, whose servers are shared, on one worker; in the
# harness, loadscope keeps each module's shared real run on one worker, in the order the
# harness's conftest.py gives (longest first; xdist would reorder by test count), and its real
# runs load both CPUs, so no more than two at a time.
echo "== tests: commons and every app (tests/)"
uv run --locked --project commons pytest -n 3 --dist loadgroup --durations=10 "$@"

echo "== tests: the benchmark harness (loadtest/harness_tests/; a few short real runs)"
# -v: a line per test, so the real runs do not look like a hang.
uv run --locked --project loadtest pytest -n 2 --dist loadscope --no-loadscope-reorder -v \
  --durations=10 \
  loadtest/harness_tests "$@"
