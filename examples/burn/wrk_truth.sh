#!/usr/bin/env bash
# The truth compare should find for examples/burn.toml, measured without the lab: both burn
# servers on CPU 1, wrk (10 connections, one thread) on CPU 0, ROUNDS alternating turns of
# SECONDS each, the slow server's r/s over the fast one's per round. Needs wrk and taskset.
#   examples/burn/wrk_truth.sh [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")"
rounds="${1:-10}" seconds="${2:-3}"
command -v wrk >/dev/null || { echo "wrk_truth.sh: error: wrk is missing (apt-get install wrk)" >&2; exit 1; }
taskset -c 1 python3 server.py --port 8101 --ms 10 & fast=$!
taskset -c 1 python3 server.py --port 8102 --ms 20 & slow=$!
trap 'kill $fast $slow 2>/dev/null' EXIT
sleep 1
rps() { taskset -c 0 wrk -t1 -c10 -d"${seconds}s" "http://127.0.0.1:$1/burn" | awk '/Requests\/sec/ {print $2}'; }
ratios=()
for round in $(seq "$rounds"); do
  if [ $((round % 2)) -eq 1 ]; then f=$(rps 8101); s=$(rps 8102); else s=$(rps 8102); f=$(rps 8101); fi
  ratio=$(python3 -c "print(f'{$s / $f:.4f}')")
  ratios+=("$ratio")
  echo "round $round: fast $f r/s, slow $s r/s, slow/fast $ratio"
done
python3 -c "import statistics, sys; r = sorted(map(float, sys.argv[1:])); print(f'slow/fast: median {statistics.median(r):.3f} (min {r[0]:.3f}, max {r[-1]:.3f}) over {len(r)} rounds')" "${ratios[@]}"
