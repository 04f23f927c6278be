#!/usr/bin/env bash
# The test suite: bootstrap uv and the locked environments, lint, then run every test against
# a real PostgreSQL (embedded by default; set DATABASE_URL to use your own server).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/bootstrap.sh commons app_v1 app_v2

echo "== ruff (lint and format check)"
uv run --locked --project commons ruff check .
uv run --locked --project commons ruff format --check .

echo "== tests: commons and both apps"
uv run --locked --project commons pytest "$@"
