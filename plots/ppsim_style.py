"""One style for every ppsim figure: sizes for a two-column paper, one colour per op kind (the
same as the SVG Gantt chart of sim/io/svg.cpp) and one colour per schedule, and the readers and
writers the figure scripts share."""
import argparse
import csv
import io
import json
import math
import os
import stat
import sys
import zlib
from fractions import Fraction

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Widths of a column and of the full page of a two-column paper (ACM/IEEE/NeurIPS), inches.
COLUMN_WIDTH = 3.4
PAGE_WIDTH = 7.0

# Op kinds: the hues of the SVG Gantt chart (sim/io/svg.cpp), with lightness steps ~40 apart so
# the kinds a schedule mixes (F, OV, B, BW, W) stay apart in black and white. A recomputation
# (R, RW, RBW) has the lightness of the op it redoes and is dotted (RECOMPUTE_HATCH).
OP_COLORS = {
    "F": "#bcdcf0",
    "OV": "#7cc2b6",
    "B": "#e07014",
    "BW": "#c0333b",
    "W": "#1f4f1c",
    "R": "#e3c6ea",
    "RW": "#4a2a60",
    "RBW": "#a8305f",
}
RECOMPUTE_KINDS = {"R", "RW", "RBW"}
RECOMPUTE_HATCH = "...."
# Chunk c of a device (its c-th stage, interleaved and V schedules hold several) is hatched
# CHUNK_HATCHES[c % len]: chunk 0 plain, then lines of other directions.
CHUNK_HATCHES = ["", "////", "\\\\\\\\", "xxxx", "----", "||||", "++++"]


def op_hatch(kind, chunk):
    """Hatch of an op box: its chunk's lines, plus dots for a recomputation."""
    return CHUNK_HATCHES[chunk % len(CHUNK_HATCHES)] + (RECOMPUTE_HATCH if kind in RECOMPUTE_KINDS else "")


def lightness(color):
    """Grey level (0-255, ITU-R 601 weights) of '#rrggbb' as printed in black and white."""
    red, green, blue = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return 0.299 * red + 0.587 * green + 0.114 * blue


def contrast_color(color):
    """Black on a light fill, white on a dark one (op labels, hatch lines)."""
    return "black" if lightness(color) > 128 else "white"


# Schedules in the order of `ppsim schedules`, so a schedule keeps its colour and marker in every
# figure. The palette has no pale colours (they vanish in print); each schedule also has a marker
# of its own, which tells the lines apart in black and white.
SCHEDULE_ORDER = [
    "gpipe", "1f1b", "1f1b-split", "interleaved-1f1b", "looped-bfs", "hanayo", "zb-h1", "zb-h2",
    "zb-1p", "zb-2p", "zb-auto", "zb-v", "zb-v-greedy", "v-min", "v-half", "v-auto", "dualpipe",
    "dualpipev", "allremat-1f1b", "full-remat",
]
_PALETTE = plt.get_cmap("tab10").colors + plt.get_cmap("Dark2").colors + ("#000000", "#5b3a29")
_MARKERS = ["o", "s", "^", "v", "D", "<", ">", "p", "P", "*", "X", "h", "d", "8", "H", "x", "+", "1",
            "2", "3"]


def _schedule_index(name):
    base = name.split(" ")[0]
    return SCHEDULE_ORDER.index(base) if base in SCHEDULE_ORDER else zlib.crc32(base.encode())


def schedule_color(name):
    """Colour of a schedule (or of a 'schedule + remat' label, by its schedule)."""
    return _PALETTE[_schedule_index(name) % len(_PALETTE)]


def schedule_marker(name):
    return _MARKERS[_schedule_index(name) % len(_MARKERS)]


def label_order(label):
    """Sort key of 'schedule' and 'schedule + policy' labels: `ppsim schedules` order, each
    schedule before its remat pairs."""
    return (_schedule_index(label) if label.split(" ")[0] in SCHEDULE_ORDER else len(SCHEDULE_ORDER),
            label)


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
        # SVG text stays text (editable, searchable; the tests read the labels from it).
        "svg.fonttype": "none",
        "svg.hashsalt": "ppsim",
        "hatch.linewidth": 0.5,
        "ps.fonttype": 42,
        "savefig.bbox": "tight",
        "savefig.pad_inches": 0.02,
    })


def figure(args, width=COLUMN_WIDTH, height=2.2):
    """A figure `width` inches wide (`--width` overrides it) and `height` tall."""
    apply()
    return plt.subplots(figsize=(args.width or width, height))


def legend_and_title(ax, args, ncol=3, **legend_options):
    """The legend in rows above the axes and the title (--title), if any, above the legend: its
    padding is the legend's height, measured once the figure is laid out, so they never overlap."""
    legend = ax.legend(ncol=ncol, loc="lower left", bbox_to_anchor=(0, 1.02), borderaxespad=0,
                       **legend_options)
    if not args.title:
        return
    figure_ = ax.figure
    renderer = figure_.canvas.get_renderer()
    legend_top = legend.get_window_extent(renderer).y1
    axes_top = ax.get_window_extent(renderer).y1
    points_per_pixel = 72 / figure_.dpi
    ax.set_title(args.title, pad=max(0, legend_top - axes_top) * points_per_pixel + 4)


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
    parser.add_argument("--width", type=width_inches, default=None, help="figure width in inches")
    if extra:
        extra(parser)
    args = parser.parse_args()
    # The format is the extension's: without a known one matplotlib names a temporary file.
    if os.path.splitext(args.output)[1].lower() not in FIGURE_EXTENSIONS:
        fail(f"-o {args.output}: expected a figure file ending in {', '.join(FIGURE_EXTENSIONS)}")
    return args


FIGURE_EXTENSIONS = (".pdf", ".svg", ".png")


MAX_WIDTH_INCHES = 100


def width_inches(text):
    """--width: inches, from 1 to MAX_WIDTH_INCHES (a 300 dpi PNG of that is 30000 pixels)."""
    try:
        inches = float(text)
    except ValueError:
        inches = None
    if inches is None or not 1 <= inches <= MAX_WIDTH_INCHES:
        raise argparse.ArgumentTypeError(
            f"expected a width in inches from 1 to {MAX_WIDTH_INCHES}, got {text!r}")
    return inches


def time_window(text):
    """--time-window START:END in ms, either end may be left out ("100:", ":50")."""
    start, colon, end = text.partition(":")
    try:
        window = (float(start) if start.strip() else 0.0, float(end) if end.strip() else math.inf)
    except ValueError:
        window = None
    if not colon or window is None or not all(value >= 0 for value in window):
        raise argparse.ArgumentTypeError(f"expected START:END in ms such as 0:50, got {text!r}")
    if window[0] >= window[1]:
        raise argparse.ArgumentTypeError(f"START must come before END, got {text!r}")
    return window


def add_time_window(parser):
    parser.add_argument("--time-window", type=time_window, default=(0.0, math.inf),
                        metavar="START:END", help="draw only this time span (ms)")


def clip_to_window(args, end, what):
    """The (start, end) in ms a trace figure shows: --time-window, cut at the run's `end`."""
    start, stop = args.time_window
    if start >= end:
        fail(f"{args.input}: --time-window: starts at {start:g} ms, after the {what} ends ({end:g} ms)")
    return start, min(stop, end)


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
    """Rows of a `ppsim sweep` results file as dicts (each with its line, `_line`); fails naming
    missing columns, and a row whose cells are not the header's (a file cut short)."""
    reader = csv.DictReader(io.StringIO(_read_text(path), newline=""))
    rows = []
    for row in reader:
        extra = row.pop(None, [])  # cells past the header's
        cells = sum(value is not None for value in row.values()) + len(extra)
        if cells != len(reader.fieldnames):
            fail(f"{path}:{reader.line_num}: the row has {cells} cells where the header has "
                 f"{len(reader.fieldnames)}: is the file cut short?")
        row["_line"] = reader.line_num
        rows.append(row)
    columns = reader.fieldnames or []
    global _results_path
    _results_path = path
    missing = [name for name in required if name not in columns]
    if missing:
        fail(f"{path}: missing column(s) {', '.join(missing)}")
    return rows


def number(row, column):
    """The row's `column` as a finite number, None when empty; fails naming the line otherwise."""
    text = row[column]
    if text in ("", None):
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        fail(f"{_results_path}:{row['_line']}: field '{column}': expected a finite number, got {text!r}")
    return value


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


# Byte units as the scenario reader accepts them (base/decimal.cpp, parse_byte_size).
_BYTE_UNITS = {"TiB": 2**40, "GiB": 2**30, "MiB": 2**20, "KiB": 2**10,
               "TB": 10**12, "GB": 10**9, "MB": 10**6, "KB": 10**3, "B": 1}


def _byte_unit(text):
    return next((unit for unit in _BYTE_UNITS if text.endswith(unit)), None)


def is_byte_column(rows, column):
    """cluster.memory, or any column whose cells carry a byte unit ("80GiB"): drawn in GiB."""
    return column == "cluster.memory" or any(_byte_unit((row.get(column) or "").strip().strip('"'))
                                             for row in rows)


def budget_value(row, column, in_bytes):
    """A budget cell on the plotted axis: a number as written; a byte size ("80GiB",
    "85899345920", "8e10", "3/2TiB", as docs/scenario.md writes cluster.memory) in GiB."""
    text = (row.get(column) or "").strip().strip('"')
    if text == "":
        return None
    unit = _byte_unit(text) if in_bytes else None
    try:
        value = Fraction(text[: -len(unit)] if unit else text)
    except (ValueError, ZeroDivisionError):
        expected = "a byte size such as 80GiB" if in_bytes else "a number"
        fail(f"{_results_path}: column {column}: expected {expected}, got {row.get(column)!r}")
    return float(value * _BYTE_UNITS[unit or "B"] / 2**30) if in_bytes else float(value)


def budget_label(column, in_bytes):
    """The axis label of a budget column, with its unit."""
    if column == "cluster.K":
        return "memory cap K (activations per device)"
    if column == "cluster.memory":
        return "memory budget per device (GiB)"
    return f"{column} (GiB)" if in_bytes else column


class BudgetAxis:
    """The budget column a figure draws on x (budget_column), its label and how its cells read."""

    def __init__(self, rows, requested):
        self.column = budget_column(rows, requested)
        self.in_bytes = is_byte_column(rows, self.column)
        self.label = budget_label(self.column, self.in_bytes)

    def value(self, row):
        return budget_value(row, self.column, self.in_bytes)


def pair_label(row):
    """'schedule' or 'schedule + remat policy' when a policy other than none ran."""
    policy = row.get("remat_policy", "none")
    return row["schedule"] if policy in ("", "none") else f"{row['schedule']} + {policy}"


def read_trace(path, whole=False):
    """The events of a `ppsim simulate --trace` file, or with `whole` the whole JSON object."""
    text = _read_text(path)
    try:
        trace = json.loads(text)
        events = trace["traceEvents"]
    except (ValueError, KeyError, TypeError) as error:
        fail(f"{path}: not a Chrome trace written by ppsim simulate --trace ({error})")
    return trace if whole else events
