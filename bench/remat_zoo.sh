#!/bin/sh
# Times `ppsim remat` on every model of scenarios/models/ for the main schedules at a budget
# that forces recomputation (docs/performance.md, "Rematerialization on the zoo"): one line per
# (model, schedule) with the wall time, the ILP row's status, its span and bound.
#   bench/remat_zoo.sh [BUILD_DIR] [BUDGET] [TIME_LIMIT] [CHECKPOINT_LEVELS]
set -eu
build=${1:-build}
budget=${2:-60GiB}
limit=${3:-3}
levels=${4:-0}
ppsim=$build/cli/ppsim
printf '%-16s %-17s %8s  %-10s %10s %10s\n' model schedule wall status span bound
for model in scenarios/models/*.toml; do
  name=$(basename "$model" .toml)
  for schedule in 1f1b zb-h1 zb-h2 interleaved-1f1b zb-v; do
    start=$(date +%s.%N)
    if out=$("$ppsim" remat "$model" --schedule "$schedule" --memory "$budget" --time-limit "$limit" --checkpoint-levels "$levels" 2>&1); then
      row=$(printf '%s\n' "$out" | grep '^ilp  ')
      # The status is one word ("optimal") or two ("gap 2.07%"); the span follows it.
      status=$(printf '%s\n' "$row" | awk '{print ($2 == "gap") ? $2 " " $3 : $2}')
      span=$(printf '%s\n' "$row" | awk '{print ($2 == "gap") ? $4 : $3}')
      bound=$(printf '%s\n' "$row" | sed -n 's/.*bound \([0-9.]*\).*/\1/p')
    else
      status=error; span=-; bound=$(printf '%s\n' "$out" | tail -1 | cut -c1-60)
    fi
    end=$(date +%s.%N)
    printf '%-16s %-17s %7.2fs  %-10s %10s %10s\n' "$name" "$schedule" "$(echo "$end - $start" | bc)" "$status" "$span" "$bound"
  done
done
