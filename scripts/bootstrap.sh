#!/usr/bin/env bash
# Sourced by the entry points: make `uv` available (installing it from PyPI if absent) and
# sync the locked environments named in $@ (app_v1 app_v2 commons loadtest).
set -euo pipefail

ensure_uv() {
  if command -v uv >/dev/null 2>&1; then return; fi
  local user_bin
  user_bin="$(python3 -m site --user-base)/bin"
  export PATH="$user_bin:$HOME/.local/bin:$PATH"
  if command -v uv >/dev/null 2>&1; then return; fi
  echo "uv not found; installing it from PyPI (python3 -m pip install --user uv)..." >&2
  python3 -m pip install --quiet --user uv >&2 || python3 -m pip install --quiet uv >&2 || {
    echo "error: could not install uv; install it yourself (https://docs.astral.sh/uv/) and retry" >&2
    exit 1
  }
  hash -r
  command -v uv >/dev/null 2>&1 || {
    echo "error: uv was installed but is not on PATH; add $user_bin to PATH and retry" >&2
    exit 1
  }
}

sync_projects() {
  local project extras
  for project in "$@"; do
    extras=()
    # The embedded PostgreSQL lives behind commons' optional extra.
    [ "$project" = commons ] && extras=(--all-extras)
    uv sync --quiet --locked --project "$project" "${extras[@]}"
  done
}

ensure_uv
unset VIRTUAL_ENV  # each project runs in its own .venv, never in the caller's
sync_projects "$@"
