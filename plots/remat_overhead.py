"""Recomputation overhead versus the memory budget: recomputation time as a share of the ideal
compute time, and the makespan slowdown against the fastest run of the same schedule. From a `ppsim sweep` results file with a budget column and remat policies.
    /usr/bin/python3 plots/remat_overhead.py results.csv -o remat.pdf"""
import collections

import ppsim_style as style


def main():
    args = style.arguments(__doc__, lambda p: p.add_argument("--x", default=None, help="budget column"))
    rows = style.read_results(args.input, ["schedule", "feasible", "makespan", "ideal", "recompute_time", "p"])
    axis = style.BudgetAxis(rows, args.x)
    recompute = collections.defaultdict(dict)
    makespan = collections.defaultdict(dict)
    for row in style.feasible(rows):
        x = axis.value(row)
        if x is None:
            continue
        label = style.pair_label(row)
        # recompute_time sums all devices; ideal is the busiest device's compute.
        share = style.number(row, "recompute_time") / (style.number(row, "ideal") * int(row["p"]))
        recompute[label][x] = min(share, recompute[label].get(x, share))
        value = style.number(row, "makespan")
        makespan[label][x] = min(value, makespan[label].get(x, value))
    if not recompute:
        style.fail(f"{args.input}: no feasible run to plot")
    fig, _ = style.figure(args, style.COLUMN_WIDTH, 3.0)
    fig.clf()
    top, bottom = fig.subplots(2, 1, sharex=True)
    # Slowdown against the fastest run of the same schedule, with or without recomputation.
    fastest = {}
    for label, values in makespan.items():
        base = label.split(" + ")[0]
        fastest[base] = min(min(values.values()), fastest.get(base, float("inf")))
    reference = {label: fastest[label.split(" + ")[0]] for label in makespan}
    for label in sorted(recompute, key=style.label_order):
        points = sorted(recompute[label].items())
        kwargs = {"marker": style.schedule_marker(label), "color": style.schedule_color(label), "label": label,
                  "linestyle": "--" if " + " in label else "-"}
        top.plot([x for x, _ in points], [100 * y for _, y in points], **kwargs)
        slow = sorted(makespan[label].items())
        bottom.plot([x for x, _ in slow], [100 * (m / reference[label] - 1) for _, m in slow], **kwargs)
    top.set_ylabel("recompute / ideal (%)")
    bottom.set_ylabel("slowdown (%)")
    bottom.set_xlabel(axis.label)
    style.legend_and_title(top, args)
    style.save(fig, args)


if __name__ == "__main__":
    main()
