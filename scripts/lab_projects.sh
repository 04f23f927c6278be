#!/usr/bin/env bash
# The lab's uv projects, one a line: commons first (every other one uses it), then every
# top-level folder with a uv.lock (the arms' environments, the harness). A new arm's folder is
# picked up here by itself; tests check this list against the arm registry (commons/arms.py).
set -euo pipefail
cd "$(dirname "$0")/.."
echo commons
for lock in */uv.lock; do
  project="${lock%/uv.lock}"
  [ "$project" = commons ] || echo "$project"
done
