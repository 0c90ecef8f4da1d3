#!/usr/bin/env python3
"""The quality grid of docs/synthesis.md: runs `ppsim synthesize` on every point of
scenarios/synthesis/grid.txt (one point per line: the flags of the scenario) and prints the
table: the best registered schedule that fits the cap (the fastest known), the synthesized makespan, the
best lower bound, the gap and the time.

  bench/synthesis_grid.py build/cli/ppsim [--time-limit S] [--every N] [--write-grid]
                         [--check-optimal S]

--write-grid rewrites the grid file from the definition below; --every N runs one point in N;
--check-optimal S also runs `ppsim optimal` with a time limit of S seconds on every point and
compares wherever it proves the optimum (it refuses instances past its size guard at once).
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time

GRID = pathlib.Path(__file__).resolve().parent.parent / "scenarios" / "synthesis" / "grid.txt"
COSTS = {"1:1:1": (1, 1, 1), "1:2:1": (1, 2, 1), "2:3:1": (2, 3, 1)}
PLACEMENTS = {"single": "zb-h1", "v": "zb-v"}


def unbalanced_scenario(p, placement):
    """Per-stage unbalanced costs at 1:2:1: the first and last stages (embedding, loss) carry
    1.5 times the others; on the V each chunk is half a device's share. Written next to the grid
    as unbalanced-pP-PLACEMENT.toml; returns its path relative to the repository."""
    stages, share = (p, 1.0) if placement == "single" else (2 * p, 0.5)
    def costs(value):
        return ", ".join(str(value * share * (1.5 if s in (0, stages - 1) else 1))
                         for s in range(stages))
    path = GRID.parent / f"unbalanced-p{p}-{placement}.toml"
    path.write_text(
        "# Synthesis grid (docs/synthesis.md): first and last stages 1.5x the others, F:B:W = "
        "1:2:1, per stage (per chunk on the V).\n[model]\ncost_unit = \"stage\"\n"
        f"F = [{costs(1)}]\nB = [{costs(2)}]\nW = [{costs(1)}]\n\n[cluster]\ndevices = {p}\n\n"
        f"[pipeline]\nschedule = \"{PLACEMENTS[placement]}\"\n")
    return path.relative_to(GRID.parent.parent.parent)


def grid_points():
    for p in (4, 8, 16):
        for m in (p, 2 * p, 4 * p):
            for costs in (*COSTS, "unbalanced"):
                f, b, w = COSTS.get(costs, (1, 2, 1))
                for comm in (0, 0.5 * f):
                    for placement, schedule in PLACEMENTS.items():
                        # Caps from the least any registered schedule of the placement reaches
                        # (about p/2 + 1 on V, p on a single wave at m >= p) to 2p.
                        low = p // 2 + 1 if placement == "v" else p
                        for cap in sorted({low, p, 2 * p}):
                            if costs == "unbalanced":
                                yield (f"{unbalanced_scenario(p, placement)} -m {m} "
                                       f"--comm {comm} --K {cap}")
                            else:
                                yield (f"-p {p} -m {m} --F {f} --B {b} --W {w} --comm {comm} "
                                       f"--schedule {schedule} --K {cap}")


def proven_optimum(ppsim, point, seconds):
    """`ppsim optimal`'s makespan when it proves it optimal within `seconds`, else None."""
    done = subprocess.run([ppsim, "optimal", *point.split(), "--format", "json",
                           "--time-limit", str(seconds)], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    result = json.loads(done.stdout)
    return result["optimal_makespan"] if result["proven_optimal"] else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ppsim")
    parser.add_argument("--time-limit", type=float, default=10)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--write-grid", action="store_true")
    parser.add_argument("--check-optimal", type=float, default=0)
    args = parser.parse_args()
    if args.write_grid:
        GRID.write_text("".join(point + "\n" for point in grid_points()))
    points = [line for line in GRID.read_text().splitlines() if line.strip()][:: args.every]
    optimal_column = " optimal |" if args.check_optimal else ""
    print(f"| point | best registered | synthesized | bound | gap | seconds |{optimal_column}")
    print("| --- | --- | ---: | ---: | ---: | ---: |" + (" ---: |" if args.check_optimal else ""))
    rows = []
    optimal_equal, optimal_proven = 0, 0
    for point in points:
        started = time.monotonic()
        done = subprocess.run([args.ppsim, "synthesize", *point.split(), "--format", "json",
                               "--time-limit", str(args.time_limit)],
                              capture_output=True, text=True)
        seconds = time.monotonic() - started
        if done.returncode != 0:
            print(f"| `{point}` | {done.stderr.strip()} | | | | |")
            continue
        result = json.loads(done.stdout)
        rows.append((result, seconds))
        optimal_cell = ""
        if args.check_optimal:
            optimal = proven_optimum(args.ppsim, point, args.check_optimal)
            optimal_cell = " - |" if optimal is None else f" {optimal} |"
            if optimal is not None:
                optimal_proven += 1
                optimal_equal += optimal == result["makespan"]
        print(f"| `{point}` | {result['best_known']} {result['best_known_makespan']} | "
              f"{result['makespan']} | "
              f"{result['best_lower_bound']} ({result['bound']}) | {100 * result['gap']:.2f}% | "
              f"{seconds:.1f} |{optimal_cell}", flush=True)
    if not rows:
        return 1
    published = [(r, s) for r, s in rows if r["best_known"] != "serial"]
    slower = sum(r["makespan"] > r["best_known_makespan"] for r, _ in published)
    open_gap = [r for r, _ in published
                if r["best_known_makespan"] > 1.01 * r["best_lower_bound"]]
    faster = sum(r["makespan"] < r["best_known_makespan"] for r in open_gap)
    print(f"\n{len(rows)} points; slower than the best registered: {slower}; "
          f"strictly faster where its gap exceeds 1%: {faster} of {len(open_gap)}; "
          f"median gap {100 * statistics.median(r['gap'] for r, _ in rows):.2f}%; "
          f"slowest point {max(s for _, s in rows):.1f} s")
    if args.check_optimal:
        print(f"equal to `ppsim optimal` on {optimal_equal} of the {optimal_proven} points where "
              f"it proved the optimum within {args.check_optimal:g} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
