#!/usr/bin/env bash
# The test suite: bootstrap uv and the locked environments, lint, then run every test against
# a real PostgreSQL (embedded by default; set DATABASE_URL to use your own server).
# Arguments go to both pytest runs (e.g. -x, -q, -k name).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/bootstrap.sh commons app_v1 app_v2 app_v2_latest loadtest

echo "== ruff (lint and format check)"
uv run --locked --project commons ruff check .
uv run --locked --project commons ruff format --check .

echo "== tests: commons and every app (tests/)"
uv run --locked --project commons pytest "$@"

echo "== tests: the benchmark harness (loadtest/tests/; a few real runs of a minute or two each)"
# -v: a line per test, so the long end-to-end runs do not look like a hang.
uv run --locked --project loadtest pytest -v loadtest/tests "$@"
