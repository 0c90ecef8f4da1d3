"""Simulated makespan against the best lower bound, one marker per schedule; points on the
diagonal are provably optimal. From a `ppsim sweep` results file.
    /usr/bin/python3 plots/makespan_vs_bound.py results.csv -o bound.pdf"""
import collections

import ppsim_style as style


def main():
    args = style.arguments(__doc__)
    rows = style.read_results(args.input, ["schedule", "feasible", "makespan", "best_lower_bound"])
    points = collections.defaultdict(list)
    for row in style.feasible(rows):
        makespan, bound = style.number(row, "makespan"), style.number(row, "best_lower_bound")
        if makespan is not None and bound is not None:
            points[style.pair_label(row)].append((bound, makespan))
    if not points:
        style.fail(f"{args.input}: no feasible run with a lower bound to plot")
    fig, ax = style.figure(args, style.COLUMN_WIDTH, 2.6)
    low = min(min(b, m) for values in points.values() for b, m in values)
    high = max(max(b, m) for values in points.values() for b, m in values)
    ax.plot([low, high], [low, high], color="black", linewidth=0.6, linestyle="--", label="makespan = bound")
    for label, values in sorted(points.items(), key=lambda item: style.label_order(item[0])):
        ax.scatter([b for b, _ in values], [m for _, m in values], s=9, marker=style.schedule_marker(label),
                   color=style.schedule_color(label), label=label, linewidths=0.5)
    ax.set_xlabel("best lower bound (ms)")
    ax.set_ylabel("simulated makespan (ms)")
    style.legend_and_title(ax, args, markerscale=1.3)
    style.save(fig, args)


if __name__ == "__main__":
    main()
