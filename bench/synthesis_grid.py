#!/usr/bin/env python3
"""The quality grid of docs/synthesis.md: runs `ppsim synthesize` on every point of
scenarios/synthesis/grid.txt (one point per line: the flags of the scenario) and prints the
table: the best registered schedule that fits the cap (the fastest known), the synthesized makespan, the
best lower bound, the gap and the time.

  bench/synthesis_grid.py build/cli/ppsim [--time-limit S] [--every N] [--write-grid]
                         [--check-optimal S] [--zoo] [--check-compare]

--write-grid rewrites the grid file from the definition below; --every N runs one point in N
(0: none, only the points --tight and --zoo add);
--check-optimal S also runs `ppsim optimal` with a time limit of S seconds on every point and
compares wherever it proves the optimum (it refuses instances past its size guard at once).
--zoo adds the shipped models under byte budgets that bind (ZOO below), --tight the points of
TIGHT: caps below the least any registered schedule of the placement reaches as it is, where only
recomputation fits; --check-compare also
runs `ppsim compare` on the point's placement and backward form (the schedules of PLACEMENT_
SCHEDULES, with no recomputation, full recomputation and the remat ILP's plan) and compares the
synthesized makespan with its best run that fits.
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
# The registered schedules of each placement with a split backward: what synthesize's seeds are.
PLACEMENT_SCHEDULES = {"zb-h1": "1f1b-split,zb-h1,zb-h2,zb-1p,zb-2p,zb-auto",
                       "zb-v": "zb-v,zb-v-greedy,v-min,v-half,v-auto"}
# Shipped models (p = 8, m = 64, byte model) under budgets where memory binds: for each, a budget
# where the ILP's plans fit on both placements and one close to the least any plan reaches.
ZOO = [f"scenarios/models/{model}.toml --memory {budget} --schedule {schedule}"
       for model, budgets in (("gpt-1.5b", ("8GiB", "10GiB")),
                              ("llama3-8b", ("27GiB", "30GiB", "40GiB")))
       for budget in budgets for schedule in PLACEMENTS.values()]


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


# Caps where only recomputation fits (the grid's caps start at the least a registered schedule
# reaches as it is): 2 and p/2 on the single wave, 2 and p/4 + 1 on the V; m = 2p, F:B:W = 1:2:1.
TIGHT = [f"-p {p} -m {2 * p} --F 1 --B 2 --W 1 --comm {comm} --schedule {schedule} --K {cap}"
         for p in (4, 8, 16) for comm in (0, 0.5)
         for schedule, caps in (("zb-h1", (2, p // 2)), ("zb-v", (2, p // 4 + 1)))
         for cap in sorted(set(caps))]


def compare_best(ppsim, point):
    """The fastest run that fits of `ppsim compare` on the point's placement and backward form,
    with no recomputation, full recomputation or the ILP's plan: (makespan, schedule, policy), or
    None when none fits."""
    words = point.split()
    schedule = words[words.index("--schedule") + 1] if "--schedule" in words else None
    if schedule is None:  # a grid scenario file names its schedule
        text = pathlib.Path(words[0]).read_text()
        schedule = next(s for s in PLACEMENT_SCHEDULES if f'"{s}"' in text)
    else:
        at = words.index("--schedule")
        words = words[:at] + words[at + 2:]
    done = subprocess.run([ppsim, "compare", *words, "--schedules", PLACEMENT_SCHEDULES[schedule],
                           "--remat", "none,full,ilp", "--format", "json", "-q"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None
    runs = [run for run in json.loads(done.stdout)["rankings"][0]["runs"]
            if run["report"] and run["report"]["feasible"]]
    if not runs:
        return None
    best = min(runs, key=lambda run: run["report"]["makespan"])
    return best["report"]["makespan"], best["schedule"], best["policy"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ppsim")
    parser.add_argument("--time-limit", type=float, default=10)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--write-grid", action="store_true")
    parser.add_argument("--check-optimal", type=float, default=0)
    parser.add_argument("--zoo", action="store_true")
    parser.add_argument("--tight", action="store_true")
    parser.add_argument("--check-compare", action="store_true")
    args = parser.parse_args()
    if args.write_grid:
        GRID.write_text("".join(point + "\n" for point in grid_points()))
    grid = [line for line in GRID.read_text().splitlines() if line.strip()]
    points = grid[:: args.every] if args.every > 0 else []  # 0: only --tight and --zoo
    if args.tight:
        points += TIGHT
    if args.zoo:
        points += ZOO
    optimal_column = " optimal |" if args.check_optimal else ""
    compare_column = " compare's best |" if args.check_compare else ""
    print(f"| point | best known | synthesized | bound | gap | seconds |{optimal_column}"
          f"{compare_column}")
    print("| --- | --- | ---: | ---: | ---: | ---: |" + (" ---: |" if args.check_optimal else "")
          + (" --- |" if args.check_compare else ""))
    rows = []
    optimal_equal, optimal_proven = 0, 0
    compared, compare_slower, compare_faster, compare_binding = 0, 0, 0, 0
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
        compare_cell = ""
        if args.check_compare:
            best = compare_best(args.ppsim, point)
            compare_cell = " - |" if best is None else f" {best[1]} + {best[2]} {best[0]} |"
            if best is not None:
                makespan, _, policy = best
                compared += 1
                compare_slower += result["makespan"] > makespan * (1 + 1e-9)
                if policy != "none":  # memory binds: compare's best run recomputes
                    compare_binding += 1
                    compare_faster += result["makespan"] < makespan * (1 - 1e-9)
        print(f"| `{point}` | {result['best_known']} {result['best_known_makespan']} | "
              f"{result['makespan']} | "
              f"{result['best_lower_bound']} ({result['bound']}) | {100 * result['gap']:.2f}% | "
              f"{seconds:.1f} |{optimal_cell}{compare_cell}", flush=True)
    if not rows:
        return 1
    published = [(r, s) for r, s in rows if r["best_known"] != "serial"]
    slower = sum(r["makespan"] > r["best_known_makespan"] for r, _ in published)
    open_gap = [r for r, _ in published
                if r["best_known_makespan"] > 1.01 * r["best_lower_bound"]]
    faster = sum(r["makespan"] < r["best_known_makespan"] for r in open_gap)
    print(f"\n{len(rows)} points; slower than the best known: {slower}; "
          f"strictly faster where its gap exceeds 1%: {faster} of {len(open_gap)}; "
          f"median gap {100 * statistics.median(r['gap'] for r, _ in rows):.2f}%; "
          f"slowest point {max(s for _, s in rows):.1f} s")
    if args.check_compare:
        print(f"against `ppsim compare`'s best run on the same placement and backward form: "
              f"slower on {compare_slower} of {compared} points; strictly faster on "
              f"{compare_faster} of the {compare_binding} where its best run recomputes")
    if args.check_optimal:
        print(f"equal to `ppsim optimal` on {optimal_equal} of the {optimal_proven} points where "
              f"it proved the optimum within {args.check_optimal:g} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
