"""Bubble ratio versus the memory cap K, one line per schedule (feasible runs only), from a
`ppsim sweep` results file over cluster.K.
    /usr/bin/python3 plots/bubble_vs_k.py results.csv -o bubble.pdf [--metric span_bubble_ratio]"""
import collections

import ppsim_style as style


def main():
    args = style.arguments(__doc__, lambda p: (
        p.add_argument("--x", default=None, help="budget column (default cluster.K)"),
        p.add_argument("--metric", default="bubble_ratio", choices=["bubble_ratio", "span_bubble_ratio"])))
    rows = style.read_results(args.input, ["schedule", "feasible", args.metric])
    axis = style.BudgetAxis(rows, args.x)
    lines = collections.defaultdict(dict)
    for row in style.feasible(rows):
        x, y = axis.value(row), style.number(row, args.metric)
        if x is not None and y is not None:
            label = style.pair_label(row)
            lines[label][x] = min(y, lines[label].get(x, y))  # best over the other axes
    if not lines:
        style.fail(f"{args.input}: no feasible run to plot")
    fig, ax = style.figure(args)
    for label in sorted(lines, key=style.label_order):
        points = sorted(lines[label].items())
        ax.plot([x for x, _ in points], [100 * y for _, y in points], marker=style.schedule_marker(label),
                color=style.schedule_color(label), label=label)
    ax.set_xlabel(axis.label)
    ax.set_ylabel(("span " if args.metric == "span_bubble_ratio" else "") + "bubble ratio (%)")
    ax.set_ylim(bottom=0)
    style.legend_and_title(ax, args)
    style.save(fig, args)


if __name__ == "__main__":
    main()
