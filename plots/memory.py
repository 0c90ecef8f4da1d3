"""Memory over time per device, from the counter tracks of a Chrome trace (`ppsim simulate --trace`),
with the cap or budget the trace carries (otherData.memory_caps) as a dashed line.
    /usr/bin/python3 plots/memory.py trace.json -o memory.pdf [--time-window 0:50]"""
import ppsim_style as style

# How each counter series is drawn: axis label, scale from the trace's unit, cap legend label.
SERIES = {
    "activations": ("activations", 1, lambda cap: f"cap K = {cap:g}"),
    "bytes": ("memory (GiB)", 2**30, lambda cap: f"budget {cap / 2**30:g} GiB"),
}


def main():
    args = style.arguments(__doc__, style.add_time_window)
    trace = style.read_trace(args.input, whole=True)
    events = trace["traceEvents"]
    caps = trace.get("otherData", {}).get("memory_caps", {})
    counters = [e for e in events if e.get("ph") == "C"]
    if not counters:
        style.fail(f"{args.input}: the trace has no memory counters")
    start, end = style.clip_to_window(
        args, max((e["ts"] + e.get("dur", 0)) for e in events if e.get("ph") in ("X", "C")) / 1000, "run")
    # One `memory` counter per device (process pid = device + 1), a series per quantity.
    names = sorted({series for e in counters for series in e["args"]})
    fig, axes = style.figure(args, style.COLUMN_WIDTH, 1.5 + 0.9 * (len(names) - 1))
    axes = [axes] if len(names) == 1 else axes
    if len(names) > 1:
        fig.clf()
        axes = fig.subplots(len(names), 1, sharex=True)
    # viridis darkens monotonically, so devices stay in order in black and white; its pale end
    # is left out.
    colors = style.plt.get_cmap("viridis")
    handles = []
    for ax, name in zip(axes, names):
        label, scale, cap_label = SERIES.get(name, (name.replace("_", " "), 1, lambda cap: f"cap {cap:g}"))
        devices = sorted({e["pid"] - 1 for e in counters if name in e["args"]})
        highest = 0
        for index, device in enumerate(devices):
            points = sorted((e["ts"] / 1000, e["args"][name] / scale) for e in counters
                            if name in e["args"] and e["pid"] - 1 == device)
            times = [t for t, _ in points] + [end]
            values = [v for _, v in points] + [points[-1][1]]
            highest = max(highest, max(values))
            (line,) = ax.step(times, values, where="post", label=f"dev {device}",
                              color=colors(0.85 * index / max(1, len(devices) - 1)))
            if ax is axes[0]:
                handles.append(line)
        if name in caps:
            cap = ax.axhline(caps[name] / scale, color="black", linestyle="--", linewidth=0.8,
                             label=cap_label(caps[name]))
            cap.set_gid(f"memory-cap-{name}")
            handles.append(cap)
            highest = max(highest, caps[name] / scale)
        ax.set_ylim(0, 1.08 * highest or 1)
        ax.set_ylabel(label)
        ax.set_xlim(start, end)
    axes[-1].set_xlabel("time (ms)")
    style.legend_and_title(axes[0], args, ncol=min(4, len(handles)), handles=handles)
    style.save(fig, args)


if __name__ == "__main__":
    main()
