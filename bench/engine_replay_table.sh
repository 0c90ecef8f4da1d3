#!/usr/bin/env bash
# Prints the "Engine replay" table of docs/performance.md: for 1F1B on the (p, m) grid, replay
# speed (CPU time of Engine::run, ops per second) and the peak resident set of a process that
# builds the scenario, schedule and engine and replays it. Each case runs in its own process so
# the peak RSS belongs to that case alone; times are the fastest of five repetitions (other
# processes on a shared machine only ever add time).
#
# usage: bench/engine_replay_table.sh [BUILD_DIR]   (default: build; RelWithDebInfo expected)
set -euo pipefail
build_dir=${1:-build}
bench="$build_dir/bench/engine_bench"
[[ -x "$bench" ]] || { echo "engine_replay_table.sh: $bench not built" >&2; exit 1; }

echo "| p | m | ops | replay wall (ms) | replay CPU (ms) | M ops/s (CPU) | peak RSS (MiB) | RSS bytes/op |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for p in 8 64 256; do
  for m in 64 1024 4096; do
    # CSV columns: name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second,
    # label,error_occurred,error_message,ops,peak_rss_MiB. The ops counter is printed with six
    # digits only, so the exact count comes from 1F1B's shape: one F and one BW per (stage, j).
    "$bench" --benchmark_filter="^BM_engine_replay/p:$p/m:$m\$" --benchmark_format=csv \
        --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>/dev/null |
      grep '_min"' |
      awk -F, -v p="$p" -v m="$m" '{
        ops = 2 * p * m; rss = $12
        printf "| %d | %d | %d | %.2f | %.2f | %.1f | %.1f | %.0f |\n", p, m, ops, $3, $4, ops / $4 / 1e3, rss, rss * 1048576 / ops
      }'
  done
done
