"""Memory over time per device, from the counter tracks of a Chrome trace (`ppsim simulate --trace`).
    /usr/bin/python3 plots/memory.py trace.json -o memory.pdf"""
import ppsim_style as style


def main():
    args = style.arguments(__doc__)
    events = style.read_trace(args.input)
    counters = [e for e in events if e.get("ph") == "C"]
    if not counters:
        style.fail(f"{args.input}: the trace has no memory counters")
    end = max((e["ts"] + e.get("dur", 0)) for e in events if e.get("ph") in ("X", "C")) / 1000
    # One `memory` counter per device (process pid = device + 1), a series per quantity.
    names = sorted({series for e in counters for series in e["args"]})
    fig, axes = style.figure(style.COLUMN_WIDTH, 1.5 + 0.9 * (len(names) - 1))
    axes = [axes] if len(names) == 1 else axes
    if len(names) > 1:
        fig.clf()
        axes = fig.subplots(len(names), 1, sharex=True)
    colors = style.plt.get_cmap("viridis")
    for ax, name in zip(axes, names):
        devices = sorted({e["pid"] - 1 for e in counters if name in e["args"]})
        for index, device in enumerate(devices):
            points = sorted((e["ts"] / 1000, e["args"][name]) for e in counters
                            if name in e["args"] and e["pid"] - 1 == device)
            times = [t for t, _ in points] + [end]
            values = [v for _, v in points] + [points[-1][1]]
            ax.step(times, values, where="post", label=f"dev {device}",
                    color=colors(index / max(1, len(devices) - 1)))
        ax.set_ylabel(name.replace("_", " "))
        ax.set_xlim(0, end)
    axes[-1].set_xlabel("time (ms)")
    axes[0].legend(ncol=min(4, len(devices)), loc="lower left", bbox_to_anchor=(0, 1.0))
    if args.title:
        axes[0].set_title(args.title, loc="right")
    style.save(fig, args)


if __name__ == "__main__":
    main()
