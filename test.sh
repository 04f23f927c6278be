#!/usr/bin/env bash
# The benchmark: take the machine (one measuring run at a time), bootstrap uv and the locked
# environments, then hand over to the Python runner. ./test.sh --help lists the options;
# ./test.sh up starts the apps and the locust web UI.
set -euo pipefail
# Where ./test.sh was called from, and with which PATH (the bootstrap puts uv's own python
# first): `compare FILE` reads a relative FILE from there, and starts its arms with that PATH.
export LAB_CALLED_FROM="${LAB_CALLED_FROM:-$PWD}"
export LAB_CALLER_PATH="${LAB_CALLER_PATH:-$PATH}"
cd "$(dirname "$0")"
# A shell starts a background job with SIGINT ignored, and bash cannot undo that for itself, so
# Ctrl-C or `kill -INT` would not stop the bootstrap. Start over once with SIGINT at its default.
if [ -z "${LAB_SIGINT_DEFAULT:-}" ]; then
  export LAB_SIGINT_DEFAULT=1
  exec python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' ./test.sh "$@"
fi

# One measuring run at a time on this machine, decided before the sync: a second sync would
# rewrite the environments under the first run. `report` and --help take no lock, and skip the
# sync while a run uses this checkout.
source scripts/one_run_at_a_time.sh
if needs_the_machine "$@"; then
  hold_the_machine "$(mode_of "$@")"
  # The lock stays with this shell and the runner it becomes, not with uv or pip (9<&-): a sync
  # that a killed run left behind must not keep the machine.
  source scripts/bootstrap.sh 9<&-
elif ! { run_in_this_checkout && [ -x loadtest/.venv/bin/python ]; }; then
  source scripts/bootstrap.sh
fi
# The project's own interpreter directly (not `uv run`), so Ctrl-C and SIGTERM reach the runner.
exec loadtest/.venv/bin/python -m loadtest "$@"
