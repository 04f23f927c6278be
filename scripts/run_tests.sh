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
     schemathesis, /docs in Chromium), against a real PostgreSQL, in parallel;
  4. loadtest/harness_tests/: the benchmark harness, with short real runs, in parallel;
  5. alone: the tests that assert a measured figure (marked `alone`), one at a time,
     with nothing else on the machine's CPUs.
About 9 to 16 minutes on a 2-vCPU VM (15-16 on an older AMD EPYC, family 23), chromium
installed (as CI does; docs/testing.md has the measured times). Tests that need
Debian's chromium or wrk are skipped where those are missing (.ci/run installs them); the
slowest tests of each step and the time of each step are printed at the end.

Options are passed to every pytest run (after the script's own -n and -m), e.g.:
  ./scripts/run_tests.sh -x                 stop at the first failure
  ./scripts/run_tests.sh -k ladder          only tests whose name matches
  ./scripts/run_tests.sh -n 0               one process, no parallel workers
  DATABASE_URL=postgresql://... ./scripts/run_tests.sh   against your own server
USAGE
  exit 0
fi

started=$SECONDS
steps=()
step_done() { steps+=("$1 $((SECONDS - step_started))s"); step_started=$SECONDS; }
step_started=$SECONDS

source scripts/bootstrap.sh
step_done "bootstrap"

# Bytecode is written while the tests run, even where the machine sets PYTHONDONTWRITEBYTECODE
# (these VMs do): pytest then rewrites each test module's asserts once, not in every worker
# (5 s of CPU a process for the harness), and the harness's runs compile the lab's own code
# once, not in each of their 46 subprocesses. The arms' packages are compiled by the bootstrap
# either way (uv sync --compile-bytecode).
unset PYTHONDONTWRITEBYTECODE

echo "== lint: ruff (check and format); mypy runs beside the tests of tests/ (below)"
uv run --locked --project commons ruff check .
uv run --locked --project commons ruff format --check .
# mypy takes one CPU for half a minute; tests/ leaves about a sixth of the two CPUs idle (its
# tests wait on servers), so mypy runs there and its verdict is read after them.
mypy_log="$(mktemp)"
uv run --locked --project loadtest mypy >"$mypy_log" 2>&1 &
mypy_pid=$!
trap 'kill "$mypy_pid" 2>/dev/null || true; rm -f "$mypy_log"' EXIT
step_done "lint"

# pytest, where "no test selected" (exit 5: -k matching only the other tree's tests, say) is
# not a failure.
selected_pytest() {
  local status=0
  "$@" || status=$?
  [ "$status" -eq 5 ] && return 0
  return "$status"
}

# pytest-xdist workers. In tests/, two: each worker starts a PostgreSQL and every arm of its own
# (15-20 s of CPU), and most of its tests are a few requests, so on two CPUs four workers took
# longer than two (docs/testing.md); loadgroup spreads the tests one by one (schemathesis' four
# runs among them) but keeps a module marked xdist_group, whose servers are shared, on one
# worker. In the harness, four: its real runs wait on fixed-length load windows; loadscope keeps
# each module's shared real run on one worker, in the order the harness's conftest.py gives
# (longest first; xdist would reorder by test count). No test there asserts a measured figure:
# those are marked `alone` and wait for the last step.
echo "== tests: commons and every app (tests/)"
selected_pytest uv run --locked --project commons pytest -n 2 --dist loadgroup -m "not alone" \
  --durations=10 "$@"
echo "== lint: mypy over commons/ and loadtest/"
mypy_status=0
wait "$mypy_pid" || mypy_status=$?
cat "$mypy_log"
[ "$mypy_status" -eq 0 ] || exit "$mypy_status"
step_done "tests/ and mypy"

echo "== tests: the benchmark harness (loadtest/harness_tests/; short real runs)"
# -v: a line per test, so the real runs do not look like a hang.
selected_pytest uv run --locked --project loadtest pytest -n 4 --dist loadscope \
  --no-loadscope-reorder -m "not alone" -v --durations=10 loadtest/harness_tests "$@"
step_done "harness"

# A ratio, an interval, a rate or a lateness measured while other tests share the two CPUs
# says more about them than about the code (docs/testing.md lists every such test and why).
echo "== tests that assert a measured figure, alone on the machine (marked alone)"
selected_pytest uv run --locked --project commons pytest -n 0 -m alone -v --durations=5 "$@"
selected_pytest uv run --locked --project loadtest pytest -n 0 -m alone -v --durations=5 \
  loadtest/harness_tests "$@"
step_done "alone"

total=$((SECONDS - started))
echo "== the suite passed in $((total / 60))m$((total % 60))s: ${steps[*]}"
