#!/usr/bin/env bash
# Sourced by the entry points: make `uv` available (installing it from PyPI if absent) and
# sync every locked environment of the lab (scripts/lab_projects.sh lists them).
set -euo pipefail

UV_VERSION=0.13.9
TOOLS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tools"

ensure_uv() {
  export PATH="$TOOLS_DIR/uv/bin:$PATH"
  if command -v uv >/dev/null 2>&1; then return; fi
  # A private venv (git-ignored .tools/) works on any Python, including Debian's system one,
  # which refuses `pip install --user` (PEP 668).
  echo "uv not found; installing uv $UV_VERSION from PyPI into .tools/uv ..." >&2
  local log
  log="$(mktemp)"
  # Ctrl-C (or a kill) half-way leaves nothing behind: the next run starts clean.
  trap 'rm -rf "$TOOLS_DIR/uv" "$log"; echo "interrupted: .tools/uv removed" >&2; exit 130' \
    INT TERM
  # pip's output (index warnings and all) is shown only if the install fails.
  if ! { python3 -m venv "$TOOLS_DIR/uv" >"$log" 2>&1 \
         && "$TOOLS_DIR/uv/bin/python" -m pip install --quiet --disable-pip-version-check \
              "uv==$UV_VERSION" >"$log" 2>&1; }; then
    cat "$log" >&2
    rm -rf "$TOOLS_DIR/uv" "$log"
    echo "error: could not install uv (needs python3 with the venv module, e.g. Debian's" \
         "python3-venv); install uv yourself (https://docs.astral.sh/uv/) and retry" >&2
    exit 1
  fi
  rm -f "$log"
  trap - INT TERM
  hash -r
}

sync_projects() {
  local project
  for project in "$@"; do
    if [ ! -d "$project/.venv" ]; then
      # Otherwise the first call (even --help) is silent while it installs.
      echo "setting up the lab's environments (an environment is missing; seconds from uv's" \
           "cache, a few minutes from PyPI) ..." >&2
      break
    fi
  done
  for project in "$@"; do
    # Every extra and group: commons' embedded PostgreSQL and probe libraries, the arms'
    # `probes` group (micro and profile run in them), the tools of the dev groups.
    # --compile-bytecode: start-up is measured as a deployed service starts, from bytecode,
    # whatever PYTHONDONTWRITEBYTECODE says (with it set, nothing would ever be cached, and
    # every start would compile FastAPI, Pydantic and SQLAlchemy again: 1.2 s instead of 0.4
    # s to import app_v2). uv does it once per install; a sync with nothing new is instant.
    uv sync --quiet --locked --all-extras --all-groups --compile-bytecode --project "$project" \
      ${LAB_INTERPRETER:+--python "$LAB_INTERPRETER"}
  done
}

# The interpreter every environment is built on, a stated choice (results.json records its
# build): LAB_PYTHON if set, else an optimised (PGO+LTO) Python 3.11 where the machine has one,
# as production images do, else the first Python 3.11, else whatever uv finds (a note says so;
# loadtest/src/loadtest/lab/interpreter.py). Given to `uv sync` only, not exported: a compare
# arm's own `uv run` must not inherit it. uv rebuilds an environment whose interpreter differs.
LAB_INTERPRETER=""
pick_interpreter() {
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  LAB_INTERPRETER="$(python3 "$here/loadtest/src/loadtest/lab/interpreter.py" --pick)" || exit 1
}

ensure_uv
pick_interpreter
unset VIRTUAL_ENV  # each project runs in its own .venv, never in the caller's
# shellcheck disable=SC2046 # one word per project: the folder names have no spaces
sync_projects $("$(dirname "${BASH_SOURCE[0]}")/lab_projects.sh")
