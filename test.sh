#!/usr/bin/env bash
# The benchmark: bootstrap uv and the locked environments, then hand over to the Python runner.
# ./test.sh --help lists the options; ./test.sh up starts the apps and the locust web UI.
set -euo pipefail
cd "$(dirname "$0")"

source scripts/bootstrap.sh commons app_v1 app_v2 app_v2_latest loadtest
# The project's own interpreter directly (not `uv run`), so Ctrl-C and SIGTERM reach the runner.
exec loadtest/.venv/bin/python -m loadtest "$@"
