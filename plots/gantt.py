"""Gantt chart of one simulated schedule from its Chrome trace (`ppsim simulate --trace`).
    /usr/bin/python3 plots/gantt.py trace.json -o gantt.pdf"""
import matplotlib.patches as patches

import ppsim_style as style


def main():
    args = style.arguments(__doc__)
    events = style.read_trace(args.input)
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") in style.OP_COLORS]
    if not ops:
        style.fail(f"{args.input}: the trace has no compute ops")
    # Trace processes count devices from 1 (Perfetto's convention): device = pid - 1.
    devices = sorted({e["pid"] - 1 for e in ops})
    end = max(e["ts"] + e["dur"] for e in ops) / 1000
    fig, ax = style.figure(style.PAGE_WIDTH, 0.35 + 0.22 * len(devices))
    for e in ops:
        kind = e["cat"]
        ax.add_patch(patches.Rectangle(
            (e["ts"] / 1000, e["pid"] - 1 - 0.4), e["dur"] / 1000, 0.8, facecolor=style.OP_COLORS[kind],
            edgecolor="white", linewidth=0.3, hatch="////" if kind in style.OP_HATCHED else None))
        if len(ops) <= 400:
            args_ = e.get("args", {})
            ax.text(e["ts"] / 1000 + e["dur"] / 2000, e["pid"] - 1, str(args_.get("microbatch", "")),
                    ha="center", va="center", fontsize=4.5, color="white")
    ax.set_xlim(0, end)
    ax.set_ylim(len(devices) - 0.5, -0.5)
    ax.set_yticks(devices, [f"dev {d}" for d in devices])
    ax.set_xlabel("time (ms)")
    ax.grid(axis="y", visible=False)
    kinds = [k for k in style.OP_COLORS if any(e["cat"] == k for e in ops)]
    handles = [patches.Patch(facecolor=style.OP_COLORS[k], hatch="////" if k in style.OP_HATCHED else None,
                             label=k) for k in kinds]
    ax.legend(handles=handles, ncol=len(kinds), loc="lower left", bbox_to_anchor=(0, 1.0), borderaxespad=0.2)
    if args.title:
        ax.set_title(args.title, loc="right")
    style.save(fig, args)


if __name__ == "__main__":
    main()
