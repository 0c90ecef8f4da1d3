"""Schedule (+ remat policy) ranking versus the memory budget: the makespan of every pair that
fits, relative to the best pair at that budget (1 = fastest), as the ELF rematerialization
paper ranks its candidates. From a `ppsim sweep` results file over a budget column.
    /usr/bin/python3 plots/ranking_vs_budget.py results.csv -o ranking.pdf [--x cluster.memory]"""
import collections

import ppsim_style as style


def main():
    args = style.arguments(__doc__, lambda p: p.add_argument("--x", default=None, help="budget column"))
    rows = style.read_results(args.input, ["schedule", "feasible", "makespan"])
    axis = style.BudgetAxis(rows, args.x)
    makespans = collections.defaultdict(dict)
    for row in style.feasible(rows):
        x, makespan = axis.value(row), style.number(row, "makespan")
        if x is not None and makespan is not None:
            label = style.pair_label(row)
            makespans[label][x] = min(makespan, makespans[label].get(x, makespan))
    if not makespans:
        style.fail(f"{args.input}: no feasible run to plot")
    best = collections.defaultdict(lambda: float("inf"))
    for values in makespans.values():
        for x, makespan in values.items():
            best[x] = min(best[x], makespan)
    fig, ax = style.figure(args, style.COLUMN_WIDTH, 2.4)
    for label in sorted(makespans, key=style.label_order):
        points = sorted(makespans[label].items())
        ax.plot([x for x, _ in points], [m / best[x] for x, m in points], marker=style.schedule_marker(label),
                color=style.schedule_color(label), linestyle="--" if " + " in label else "-", label=label)
    winners = [min(makespans, key=lambda name: makespans[name].get(x, float("inf"))) for x in sorted(best)]
    # The winner at each budget as a short bar on the bottom edge (axes fraction, so that it stays
    # inside the axes whatever the y range).
    for x, winner in zip(sorted(best), winners):
        ax.plot([x, x], [0, 0.06], transform=ax.get_xaxis_transform(), color=style.schedule_color(winner),
                linewidth=2.5, solid_capstyle="butt")
    ax.set_xlabel(axis.label)
    ax.set_ylabel("makespan / best at this budget")
    style.legend_and_title(ax, args)
    style.save(fig, args)


if __name__ == "__main__":
    main()
