"""One style for every ppsim figure: sizes for a two-column paper, one colour per op kind (the
same as the SVG Gantt chart of sim/io/svg.cpp) and one colour per schedule, and the readers and
writers the figure scripts share."""
import argparse
import csv
import io
import json
import os
import stat
import sys
import zlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Widths of a column and of the full page of a two-column paper (ACM/IEEE/NeurIPS), inches.
COLUMN_WIDTH = 3.4
PAGE_WIDTH = 7.0

# Op kinds, as in sim/io/svg.cpp (hatched there: RW, OV).
OP_COLORS = {
    "F": "#4c78a8",
    "B": "#f58518",
    "W": "#54a24b",
    "BW": "#e45756",
    "R": "#9d4f96",
    "RW": "#d6a5cf",
    "RBW": "#6b3a73",
    "OV": "#72b7b2",
}
OP_HATCHED = {"RW", "OV"}

# Schedules in the order of `ppsim schedules`, so a schedule keeps its colour in every figure.
SCHEDULE_ORDER = [
    "gpipe", "1f1b", "1f1b-split", "interleaved-1f1b", "looped-bfs", "hanayo", "zb-h1", "zb-h2",
    "zb-1p", "zb-2p", "zb-auto", "zb-v", "zb-v-greedy", "v-min", "v-half", "v-auto", "dualpipe",
    "dualpipev", "allremat-1f1b", "full-remat",
]
_PALETTE = plt.get_cmap("tab20").colors
_MARKERS = "os^vD<>pP*Xhd8H"


def schedule_color(name):
    """Colour of a schedule (or of a 'schedule + remat' label, by its schedule)."""
    base = name.split(" ")[0]
    index = SCHEDULE_ORDER.index(base) if base in SCHEDULE_ORDER else zlib.crc32(base.encode())
    return _PALETTE[index % len(_PALETTE)]


def schedule_marker(name):
    base = name.split(" ")[0]
    index = SCHEDULE_ORDER.index(base) if base in SCHEDULE_ORDER else zlib.crc32(base.encode())
    return _MARKERS[index % len(_MARKERS)]


def apply():
    """Fonts and line widths readable at column width; Type 42 fonts so PDFs embed cleanly."""
    plt.rcParams.update({
        "font.family": "serif",
        "font.size": 8,
        "axes.labelsize": 8,
        "axes.titlesize": 8,
        "legend.fontsize": 6.5,
        "xtick.labelsize": 7,
        "ytick.labelsize": 7,
        "axes.linewidth": 0.6,
        "lines.linewidth": 1.0,
        "lines.markersize": 3.5,
        "grid.linewidth": 0.4,
        "grid.color": "#e4e4e4",
        "axes.grid": True,
        "axes.axisbelow": True,
        "legend.frameon": False,
        "pdf.fonttype": 42,
        "ps.fonttype": 42,
        "savefig.bbox": "tight",
        "savefig.pad_inches": 0.02,
    })


def figure(width=COLUMN_WIDTH, height=2.2):
    apply()
    return plt.subplots(figsize=(width, height))


def legend_and_title(ax, args, **legend_options):
    """The legend in rows above the axes, and the title (--title), if any, on the axes."""
    ax.legend(ncol=3, loc="lower left", bbox_to_anchor=(0, 1.02), borderaxespad=0, **legend_options)
    if args.title:
        ax.set_title(args.title)


def save(fig, args):
    """Writes the figure `args.output` names (vector PDF, or SVG or PNG by its extension) and,
    with `--png`, a 300 dpi PNG beside it, each through a temporary file and a rename: a kill or
    a failure leaves the old figures, never half of one. Nothing else is written."""
    output = args.output
    stem, extension = os.path.splitext(output)
    targets = [(output, {})]
    if args.png and extension.lower() != ".png":
        targets.append((stem + ".png", {"dpi": 300}))
    written = []
    try:
        for target, options in targets:
            target_stem, target_extension = os.path.splitext(target)
            _remove_orphans(target_stem, target_extension)
            temporary = f"{target_stem}.tmp{os.getpid()}{target_extension}"
            written.append((temporary, target))
            fig.savefig(temporary, **options)
        for temporary, target in written:
            os.replace(temporary, target)
    except OSError as error:
        for temporary, _ in written:
            if os.path.exists(temporary):
                os.remove(temporary)
        fail(f"{output}: {error.strerror}")
    plt.close(fig)


def _remove_orphans(stem, extension):
    """`FIG.tmp<pid>.pdf` files left by a plot that was killed while saving (no such process
    any more) are removed, as every other output's (docs/reliability.md)."""
    folder = os.path.dirname(stem) or "."
    prefix = os.path.basename(stem) + ".tmp"
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(extension)):
            continue
        pid = name[len(prefix):len(name) - len(extension)]
        if not pid.isdigit() or len(pid) > 9:
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            try:
                os.remove(os.path.join(folder, name))
            except OSError:
                pass
        except OSError:
            pass


def fail(message):
    print(f"ppsim plot: error: {message}", file=sys.stderr)
    sys.exit(1)


def _one_line(kind, error, _traceback):
    """Any error a script did not foresee is one line too, never a traceback."""
    if issubclass(kind, KeyboardInterrupt):
        sys.exit(130)
    message = " ".join(str(error).split())
    print(f"ppsim plot: error: {kind.__name__}: {message}" if message else f"ppsim plot: error: {kind.__name__}",
          file=sys.stderr)
    sys.exit(1)


sys.excepthook = _one_line


def arguments(description, extra=None):
    """INPUT -o OUTPUT [--title T] [--png], plus script-specific options added by `extra(parser)`."""
    parser = argparse.ArgumentParser(description=description)
    # A bad option is ppsim's one line with argparse's reason, not its usage text.
    parser.error = fail
    parser.add_argument("input")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--title", default="")
    parser.add_argument("--png", action="store_true", help="also write a 300 dpi PNG beside the figure")
    if extra:
        extra(parser)
    return parser.parse_args()


# Input files are read up to the size every ppsim reader accepts (base/text_file.h).
MAX_INPUT_BYTES = 1 << 30


def _read_text(path):
    """The text of an input file, refused past MAX_INPUT_BYTES (a device such as /dev/zero too)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        fail(f"{path}: {error.strerror}")
    if stat.S_ISDIR(mode):
        fail(f"{path}: is a directory, not an input file")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        fail(f"{path}: is a device, not an input file")
    try:
        with open(path, newline="") as file:
            text = file.read(MAX_INPUT_BYTES + 1)
    except OSError as error:
        fail(f"{path}: {error.strerror}")
    except UnicodeDecodeError:
        fail(f"{path}: not a text file")
    if len(text) > MAX_INPUT_BYTES:
        fail(f"{path}: larger than the {MAX_INPUT_BYTES >> 30} GiB an input file may have")
    return text


def read_results(path, required):
    """Rows of a `ppsim sweep` results file as dicts; fails naming missing columns."""
    rows = list(csv.DictReader(io.StringIO(_read_text(path), newline="")))
    columns = rows[0].keys() if rows else []
    global _results_path
    _results_path = path
    missing = [name for name in required if name not in columns]
    if missing:
        fail(f"{path}: missing column(s) {', '.join(missing)}")
    return rows


def number(text):
    return float(text) if text not in ("", None) else None


def feasible(rows):
    return [row for row in rows if row.get("feasible") == "true"]


_results_path = "results"


def budget_column(rows, requested):
    """The memory-budget column: the one asked for, else cluster.K, else cluster.memory."""
    columns = rows[0].keys() if rows else []
    if requested and requested not in columns:
        fail(f"{_results_path}: --x: no column '{requested}' in the file (its columns: {', '.join(columns)})")
    for name in [requested] if requested else ["cluster.K", "cluster.memory"]:
        if name in columns:
            return name
    fail("no budget column (sweep over cluster.K or cluster.memory, or pass --x COLUMN)")


_BYTE_UNITS = {"TiB": 2**40, "GiB": 2**30, "MiB": 2**20, "KiB": 2**10,
               "TB": 1e12, "GB": 1e9, "MB": 1e6, "KB": 1e3, "B": 1}


def budget_value(row, column):
    """A budget cell on the plotted axis: K as written; a byte budget ("80GiB", "85899345920",
    as docs/scenario.md writes cluster.memory) in GiB."""
    text = (row.get(column) or "").strip().strip('"')
    if text == "":
        return None
    if column != "cluster.memory":
        return number(text)
    factor = 1
    for unit, size in _BYTE_UNITS.items():
        if text.endswith(unit):
            text, factor = text[: -len(unit)], size
            break
    try:
        return float(text) * factor / 2**30
    except ValueError:
        fail(f"column {column}: expected a byte size such as 80GiB, got {row.get(column)!r}")


def budget_label(column):
    """The axis label of a budget column, with its unit."""
    if column == "cluster.K":
        return "memory cap K (activations per device)"
    if column == "cluster.memory":
        return "memory budget per device (GiB)"
    return column


def pair_label(row):
    """'schedule' or 'schedule + remat policy' when a policy other than none ran."""
    policy = row.get("remat_policy", "none")
    return row["schedule"] if policy in ("", "none") else f"{row['schedule']} + {policy}"


def read_trace(path):
    text = _read_text(path)
    try:
        return json.loads(text)["traceEvents"]
    except (ValueError, KeyError, TypeError) as error:
        fail(f"{path}: not a Chrome trace written by ppsim simulate --trace ({error})")
