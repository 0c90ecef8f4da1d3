"""Gap of the simulated makespan to the best lower bound (`gap` = makespan / best_lower_bound - 1,
docs/bounds.md), per schedule (+ remat policy): a bar to the largest gap over the sweep's points
and a dot per point; 0 means provably optimal. From a `ppsim sweep` results file.
    /usr/bin/python3 plots/gap_vs_bound.py results.csv -o gap.pdf"""
import collections

import matplotlib.lines as lines
import matplotlib.patches as patches

import ppsim_style as style

REMAT_HATCH = "////"


def main():
    args = style.arguments(__doc__)
    rows = style.read_results(args.input, ["schedule", "feasible", "gap"])
    gaps = collections.defaultdict(list)
    for row in style.feasible(rows):
        gap = style.number(row, "gap")
        if gap is not None:
            gaps[style.pair_label(row)].append(100 * gap)
    if not gaps:
        style.fail(f"{args.input}: no feasible run with a lower bound to plot")
    labels = sorted(gaps, key=style.label_order)
    fig, ax = style.figure(args, style.COLUMN_WIDTH, 2.6)
    for index, label in enumerate(labels):
        color = style.schedule_color(label)
        ax.bar(index, max(gaps[label]), width=0.7, color=color, alpha=0.35, edgecolor=color, linewidth=0.6,
               hatch=REMAT_HATCH if " + " in label else None)
        ax.scatter([index] * len(gaps[label]), gaps[label], s=7, color="black", marker=style.schedule_marker(label),
                   linewidths=0.5, zorder=3)
    ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", rotation_mode="anchor")
    ax.grid(axis="x", visible=False)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("gap to best lower bound (%)")
    # Neutral legend entries: the bars' colours are the schedules', named on the x axis.
    handles = [patches.Patch(facecolor="#d9d9d9", edgecolor="#737373", linewidth=0.6, label="largest gap"),
               lines.Line2D([], [], color="black", marker="o", markersize=2.5, linestyle="", label="one sweep point")]
    if any(" + " in label for label in labels):
        handles.append(patches.Patch(facecolor="white", edgecolor="#737373", linewidth=0.6, hatch=REMAT_HATCH,
                                     label="with recomputation"))
    style.legend_and_title(ax, args, ncol=len(handles), handles=handles)
    style.save(fig, args)


if __name__ == "__main__":
    main()
