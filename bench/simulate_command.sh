#!/usr/bin/env bash
# The everyday path of docs/performance.md: `ppsim simulate` end to end (process start, scenario,
# generation, validation, replay, memory, metrics, JSON output) on 1F1B, by default p = 64,
# m = 4096 (one F and one BW per stage and microbatch: 2pm = 524,288 ops); the fastest wall time
# of five runs and the ops per second it gives.
#
# usage: bench/simulate_command.sh [BUILD_DIR] [P M]   (default: build 64 4096)
set -euo pipefail
build_dir=${1:-build}
p=${2:-64}
m=${3:-4096}
ppsim="$build_dir/cli/ppsim"
[[ -x "$ppsim" ]] || { echo "simulate_command.sh: $ppsim not built" >&2; exit 1; }
command=("$ppsim" simulate --schedule 1f1b -p "$p" -m "$m" --F 1 --B 2 --format json)
best=""
for _ in 1 2 3 4 5; do
  start=$(date +%s%N)
  "${command[@]}" > /dev/null
  elapsed=$(($(date +%s%N) - start))
  if [[ -z "$best" || $elapsed -lt $best ]]; then best=$elapsed; fi
done
awk -v ns="$best" -v ops=$((2 * p * m)) -v c="${command[*]}" \
  'BEGIN { printf "%s\n%d ops, best of 5: %.1f ms wall, %.2f M ops/s\n", c, ops, ns / 1e6, ops / ns * 1e3 }'
