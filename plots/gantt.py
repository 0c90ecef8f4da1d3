"""Gantt chart of one simulated schedule from its Chrome trace (`ppsim simulate --trace`): one row
per device, one box per op, coloured by kind, hatched by chunk, dotted when it recomputes.
    /usr/bin/python3 plots/gantt.py trace.json -o gantt.pdf [--time-window 0:50] [--width 14]"""
import matplotlib.patches as patches

import ppsim_style as style

# An op's microbatch is written in its box when the box is at least this wide (inches).
LABEL_MIN_WIDTH = 0.09


def chunk_of_stage(ops):
    """Chunk of each (device, stage): the rank of the stage among the stages its device holds."""
    stages = {}
    for e in ops:
        stages.setdefault(e["pid"] - 1, set()).add(e["args"]["stage"])
    return {(device, stage): rank for device, held in stages.items()
            for rank, stage in enumerate(sorted(held))}


def main():
    args = style.arguments(__doc__, style.add_time_window)
    events = style.read_trace(args.input)
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") in style.OP_COLORS]
    if not ops:
        style.fail(f"{args.input}: the trace has no compute ops")
    # Trace processes count devices from 1 (Perfetto's convention): device = pid - 1.
    devices = sorted({e["pid"] - 1 for e in ops})
    start, end = style.clip_to_window(args, max(e["ts"] + e["dur"] for e in ops) / 1000, "run")
    chunk = chunk_of_stage(ops)
    shown = [e for e in ops if e["ts"] / 1000 < end and (e["ts"] + e["dur"]) / 1000 > start]
    fig, ax = style.figure(args, style.PAGE_WIDTH, 0.35 + 0.22 * len(devices))
    inches_per_ms = fig.get_figwidth() * ax.get_position().width / (end - start)
    # One collection of boxes per device, kind and chunk: a long run draws thousands of ops.
    boxes = {}
    for e in shown:
        kind, device = e["cat"], e["pid"] - 1
        left, width = e["ts"] / 1000, e["dur"] / 1000
        boxes.setdefault((device, kind, chunk[device, e["args"]["stage"]]), []).append((left, width))
        visible_left = max(left, start)
        visible_width = min(left + width, end) - visible_left
        if visible_width * inches_per_ms >= LABEL_MIN_WIDTH:
            ax.text(visible_left + visible_width / 2, device, str(e["args"].get("microbatch", "")),
                    ha="center", va="center", fontsize=4.5, color=style.contrast_color(style.OP_COLORS[kind]))
    for (device, kind, chunk_index), spans in boxes.items():
        color = style.OP_COLORS[kind]
        # The edge colour is also the hatch colour: dark on light fills, light on dark ones.
        ax.broken_barh(spans, (device - 0.4, 0.8), facecolor=color, edgecolor=style.contrast_color(color),
                       linewidth=0.2, hatch=style.op_hatch(kind, chunk_index) or None)
    ax.set_xlim(start, end)
    ax.set_ylim(len(devices) - 0.5, -0.5)
    ax.set_yticks(devices, [f"dev {d}" for d in devices])
    ax.set_xlabel("time (ms)")
    ax.grid(axis="y", visible=False)
    kinds = [k for k in style.OP_COLORS if any(e["cat"] == k for e in shown)]
    handles = [patches.Patch(facecolor=style.OP_COLORS[k], edgecolor=style.contrast_color(style.OP_COLORS[k]),
                             linewidth=0.2, hatch=style.op_hatch(k, 0) or None,
                             label=f"{k} (recompute)" if k in style.RECOMPUTE_KINDS else k) for k in kinds]
    chunks = sorted({chunk[e["pid"] - 1, e["args"]["stage"]] for e in shown})
    if len(chunks) > 1:
        handles += [patches.Patch(facecolor="white", edgecolor="black", linewidth=0.2,
                                  hatch=style.op_hatch("F", c) or None, label=f"chunk {c}") for c in chunks]
    style.legend_and_title(ax, args, ncol=len(handles), handles=handles, handlelength=1.6, columnspacing=1.0)
    style.save(fig, args)


if __name__ == "__main__":
    main()
