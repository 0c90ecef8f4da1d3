#!/bin/sh
# Times `ppsim sweep` on about 100 000 points: every schedule, p in {2, 4, 8, 16}, m in 16..64,
# W and latency varied (docs/performance.md, "Sweeps"). Prints points, seconds and points/s.
#   bench/sweep_timing.sh [BUILD_DIR] [JOBS]
# EXCLUDE (default "v-auto", whose building-block search costs seconds per point at p = 16; see
# docs/performance.md) lists schedules left out, separated by spaces; EXCLUDE= keeps them all.
set -eu
build=${1:-build}
jobs=${2:-$(nproc)}
ppsim=$(cd "$build" && pwd)/cli/ppsim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/base.toml" <<'TOML'
[model]
cost_unit = "device"
F = 1
B = 1
W = 1
[cluster]
devices = 4
TOML
exclude=" file ${EXCLUDE-v-auto} "
schedules=$("$ppsim" schedules | awk -v exclude="$exclude" \
  'index(exclude, " " $1 " ") == 0 {printf "%s\"%s\"", (n++ ? ", " : ""), $1}')
count=$(echo "$schedules" | tr ',' '\n' | wc -l)
# 19 schedules x 4 p x 25 m x 11 W x 5 latencies = 104 500 points.
cat > "$work/sweep.toml" <<TOML
base = "base.toml"
[axes]
"pipeline.schedule" = [$schedules]
"cluster.devices" = [2, 4, 8, 16]
"pipeline.microbatches" = [16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62, 64]
"model.W" = [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3]
"cluster.link.latency" = [0, 0.01, 0.05, 0.1, 0.2]
TOML
points=$((count * 4 * 25 * 11 * 5))
start=$(date +%s.%N)
"$ppsim" sweep "$work/sweep.toml" -j "$jobs" -o "$work/results.csv"
end=$(date +%s.%N)
rows=$(($(wc -l < "$work/results.csv") - 1))
failed=$(awk -F, 'NR > 1 && $NF != "" && $0 !~ /exceeds the memory cap/' "$work/results.csv" | wc -l)
echo "$rows points ($points expected, $failed not runnable), $jobs threads" \
  "$(echo "$start $end $rows" | awk '{printf "%.1f s, %.0f points/s", $2 - $1, $3 / ($2 - $1)}')"
