#!/usr/bin/env bash
# The benchmark: bootstrap uv and the locked environments, then hand over to the Python runner.
# ./test.sh --help lists the options; ./test.sh up starts the apps and the locust web UI.
set -euo pipefail
cd "$(dirname "$0")"
# A shell starts a background job with SIGINT ignored, and bash cannot undo that for itself, so
# Ctrl-C or `kill -INT` would not stop the bootstrap. Start over once with SIGINT at its default.
if [ -z "${LAB_SIGINT_DEFAULT:-}" ]; then
  export LAB_SIGINT_DEFAULT=1
  exec python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' ./test.sh "$@"
fi

source scripts/bootstrap.sh
# The project's own interpreter directly (not `uv run`), so Ctrl-C and SIGTERM reach the runner.
exec loadtest/.venv/bin/python -m loadtest "$@"
