// The figures of plots/, drawn through `ppsim plot` from sweeps and traces ppsim makes in the test,
// checked in their SVG text: axis labels, legend entries, the title above the legend, hatches, the
// cap line; and the errors of `ppsim plot`. Cases that draw are skipped (reported as skipped)
// when /usr/bin/python3 has no matplotlib.
#include "tests/cli/cli_support.h"

#include <algorithm>
#include <cctype>
#include <doctest/doctest.h>
#include <filesystem>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace ppsim {
namespace {

using testing::Scratch;

const bool kNoMatplotlib =
    std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0;

void check_figure(const Scratch &scratch, const std::string &stem, bool png = false) {
  CHECK(scratch.exists(stem + ".pdf"));
  CHECK(scratch.exists(stem + ".png") == png);
  if (scratch.exists(stem + ".pdf")) {
    CHECK(std::filesystem::file_size(scratch.file(stem + ".pdf")) > 1000);
    CHECK(scratch.read(stem + ".pdf").rfind("%PDF", 0) == 0);
  }
}

// A text of an SVG figure: the style keeps text as <text> elements (svg.fonttype none), with
// its font size and baseline position in points, y growing downwards.
struct SvgText {
  std::string text;
  double size = 0;
  double x = 0;
  double y = 0;
};

std::vector<SvgText> svg_texts(const std::string &svg) {
  static const std::regex text_element(
      R"re(<text style="font: ([0-9.]+)px[^"]*" x="([-0-9.e]+)" y="([-0-9.e]+)"[^>]*>([^<]*)</text>)re");
  std::vector<SvgText> texts;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_element);
       it != std::sregex_iterator(); ++it) {
    texts.push_back({(*it)[4], std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3])});
  }
  return texts;
}

std::optional<SvgText> find_text(const std::vector<SvgText> &texts, const std::string &text) {
  const auto found =
      std::find_if(texts.begin(), texts.end(), [&](const SvgText &t) { return t.text == text; });
  return found == texts.end() ? std::nullopt : std::optional(*found);
}

// The figure `svg` shows every one of `labels` (axis labels, legend entries, tick labels) and the
// title sits above the legend: its baseline, plus room for descenders, above the top of the
// highest legend entry (`legend`, which must all be drawn).
void check_svg(const std::string &svg, const std::string &title,
               const std::vector<std::string> &legend, const std::vector<std::string> &labels) {
  const std::vector<SvgText> texts = svg_texts(svg);
  REQUIRE(!texts.empty());
  for (const std::string &label : labels) {
    CAPTURE(label);
    CHECK(find_text(texts, label));
  }
  const auto title_text = find_text(texts, title);
  REQUIRE(title_text);
  double legend_top = std::numeric_limits<double>::infinity();
  for (const std::string &entry : legend) {
    CAPTURE(entry);
    const auto entry_text = find_text(texts, entry);
    REQUIRE(entry_text);
    legend_top = std::min(legend_top, entry_text->y - entry_text->size);
  }
  CHECK(title_text->y + 0.3 * title_text->size < legend_top);
}

// Draws `kind` from `input` through ppsim as an SVG titled `title` and returns the SVG.
// `ppsim simulate scenarios/SCENARIO_AND_OPTIONS --trace TRACE` in the scratch folder.
void write_trace(const Scratch &scratch, const std::string &scenario_and_options,
                 const std::string &trace) {
  REQUIRE(scratch
              .ppsim(fmt::format("simulate {}/scenarios/{} --trace {}", PPSIM_SOURCE_DIR,
                                 scenario_and_options, trace))
              .exit_code == 0);
}

std::string draw(const Scratch &scratch, const std::string &kind, const std::string &input,
                 const std::string &title, const std::string &options = "") {
  const auto drawn = scratch.ppsim(fmt::format("plot {} --kind {} -o {}.svg --title '{}' {}", input,
                                               kind, kind, title, options));
  CHECK(drawn.err == "");
  REQUIRE(drawn.exit_code == 0);
  return scratch.read(kind + ".svg");
}

std::size_t count(const std::string &text, const std::string &part) {
  std::size_t found = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++found;
  return found;
}

// Sweeps of the two kinds of budget: K on the quickstart scenario, and bytes written "40GiB" on
// LLaMA-2 7B (issue 18: the budget figures failed on them).
void write_sweeps(const Scratch &scratch) {
  scratch.write("k.toml", fmt::format("base = \"{}/scenarios/quickstart.toml\"\n[axes]\n"
                                      "\"pipeline.schedule\" = [\"1f1b\", \"zb-h1\", \"zb-v\"]\n"
                                      "\"cluster.K\" = [2, 3, 4, 8]\n"
                                      "\"remat.policy\" = [\"none\", \"full\"]\n",
                                      PPSIM_SOURCE_DIR));
  scratch.write("bytes.toml", fmt::format("base = \"{}/scenarios/models/llama2-7b.toml\"\n[axes]\n"
                                          "\"pipeline.schedule\" = [\"1f1b\", \"zb-h1\"]\n"
                                          "\"cluster.memory\" = [\"40GiB\", \"60GiB\", \"80GiB\"]\n"
                                          "\"remat.policy\" = [\"none\", \"full\"]\n"
                                          "\"pipeline.microbatches\" = [16]\n",
                                          PPSIM_SOURCE_DIR));
  REQUIRE(scratch.ppsim("sweep k.toml -o k.csv").exit_code == 0);
  REQUIRE(scratch.ppsim("sweep bytes.toml -o bytes.csv").exit_code == 0);
}

TEST_CASE("issue_18 the sweep figures show their axes, legend and a title above the legend" *
          doctest::skip(kNoMatplotlib)) {
  const Scratch scratch("plots-sweeps");
  write_sweeps(scratch);
  const std::string title = "A paper figure";
  check_svg(draw(scratch, "bubble-vs-k", "k.csv", title), title, {"1f1b", "zb-h1", "zb-v"},
            {"memory cap K (activations per device)", "bubble ratio (%)"});
  check_svg(draw(scratch, "makespan-vs-bound", "k.csv", title), title,
            {"makespan = bound", "1f1b", "zb-v + full"},
            {"best lower bound (ms)", "simulated makespan (ms)"});
  // One bar per pair, named on the x axis; the remat pairs are hatched.
  const std::string gap = draw(scratch, "gap-vs-bound", "k.csv", title);
  check_svg(gap, title, {"largest gap", "one sweep point", "with recomputation"},
            {"gap to best lower bound (%)", "1f1b", "1f1b + full", "zb-h1", "zb-v + full"});
  CHECK(count(gap, "<pattern ") >= 1);
  // Byte budgets are drawn in GiB whatever unit they were written in.
  const std::string ranking = draw(scratch, "ranking-vs-budget", "bytes.csv", title);
  check_svg(ranking, title, {"1f1b + full", "zb-h1 + full"},
            {"memory budget per device (GiB)", "makespan / best at this budget", "40", "60", "80"});
  const std::string overhead = draw(scratch, "remat-overhead", "bytes.csv", title);
  check_svg(
      overhead, title, {"1f1b + full", "zb-h1 + full"},
      {"memory budget per device (GiB)", "recompute / ideal (%)", "slowdown (%)", "40", "80"});
  for (const std::string &svg : {ranking, overhead})
    CHECK(svg.find("1e10") == std::string::npos); // no offset text: the ticks are GiB
}

TEST_CASE("issue_18 the Gantt chart tells chunks and recomputation apart, the memory figure "
          "draws the cap" *
          doctest::skip(kNoMatplotlib)) {
  const Scratch scratch("plots-traces");
  write_trace(scratch, "quickstart.toml --schedule interleaved-1f1b --remat full", "chunks.json");
  const std::string gantt = draw(scratch, "gantt", "chunks.json", "Interleaved 1F1B");
  check_svg(gantt, "Interleaved 1F1B", {"F", "BW", "R (recompute)", "chunk 0", "chunk 1"},
            {"time (ms)", "dev 0", "dev 3"});
  // Hatches: chunk 1's lines, the dots of R in chunks 0 and 1 (the legend's and the boxes').
  CHECK(count(gantt, "<pattern ") >= 3);

  // The count model's cap K, and a byte budget in GiB.
  const std::string count_model = draw(scratch, "memory", "chunks.json", "K = 4");
  check_svg(count_model, "K = 4", {"dev 0", "dev 3", "cap K = 4"}, {"activations", "time (ms)"});
  CHECK(count(count_model, "<g id=\"memory-cap-activations\">") == 1);
  write_trace(scratch, "models/llama2-7b.toml --schedule zb-h1 --remat full -m 16", "bytes.json");
  const std::string bytes = draw(scratch, "memory", "bytes.json", "80 GiB");
  check_svg(bytes, "80 GiB", {"dev 0", "dev 7", "budget 80 GiB"},
            {"activations", "memory (GiB)", "time (ms)"});
  CHECK(count(bytes, "<g id=\"memory-cap-bytes\">") == 1);
  CHECK(count(bytes, "<g id=\"memory-cap-activations\">") == 0);
}

// The microbatch numbers written in the op boxes (4.5 pt digits).
std::size_t op_labels(const std::string &svg) {
  std::size_t labels = 0;
  for (const SvgText &text : svg_texts(svg)) {
    if (text.size == 4.5 && !text.text.empty() &&
        std::all_of(text.text.begin(), text.text.end(), [](char c) { return std::isdigit(c); }))
      ++labels;
  }
  return labels;
}

TEST_CASE("issue_18 a Gantt chart of a long run: --time-window and --width make its ops readable" *
          doctest::skip(kNoMatplotlib)) {
  const Scratch scratch("plots-window");
  scratch.write("long.toml", "[model]\nF = 1\nB = 2\n[cluster]\ndevices = 8\n"
                             "[pipeline]\nschedule = \"1f1b\"\nmicrobatches = 32\n");
  REQUIRE(scratch.ppsim("simulate long.toml --trace long.json").exit_code == 0);
  // At page width the 32 x 2 ops of a device are a barcode: too narrow for their numbers.
  const std::string whole = draw(scratch, "gantt", "long.json", "whole");
  CHECK(op_labels(whole) == 0);
  const std::string window =
      draw(scratch, "gantt", "long.json", "window", "--time-window 20:40 --width 14");
  CHECK(op_labels(window) > 20);
  for (const SvgText &text : svg_texts(window)) {
    if (text.size == 7 && text.text.find_first_not_of("0123456789.") == std::string::npos)
      CHECK((std::stod(text.text) >= 20 && std::stod(text.text) <= 40)); // the time ticks
  }
  // --width sets the figure's width (the SVG's, in points, up to the tight bounding box): 14
  // inches against the page's 7.
  const auto svg_width = [](const std::string &svg) {
    const auto at = svg.find("width=\"");
    return std::stod(svg.substr(at + 7));
  };
  CHECK(svg_width(window) > 1.8 * svg_width(whole));

  const std::pair<const char *, const char *> refused[] = {
      {"--time-window=-5:3", "argument --time-window: expected START:END in ms such as 0:50, got "
                             "'-5:3'"},
      {"--time-window 500:", "long.json: --time-window: starts at 500 ms, after the run ends "
                             "(156 ms)"},
      {"--width 0.5", "argument --width: expected a width in inches from 1 to 100, got '0.5'"},
  };
  for (const auto &[option, message] : refused) {
    CAPTURE(option);
    const auto failed =
        scratch.ppsim(fmt::format("plot long.json --kind gantt -o bad.svg {}", option));
    CHECK(failed.exit_code == 1);
    CHECK(failed.err == fmt::format("ppsim: error: {}\n", message));
    CHECK_FALSE(scratch.exists("bad.svg"));
  }
}

TEST_CASE("issue_18 --time-window is refused for a figure without a time axis") {
  const Scratch scratch("plots-no-time");
  scratch.write("r.csv", "run,schedule\n");
  const auto failed = scratch.ppsim("plot r.csv --kind gap-vs-bound -o g.svg --time-window 0:5");
  CHECK(failed.exit_code == 1);
  CHECK(
      failed.err ==
      "ppsim: error: field '--time-window': only the gantt and memory figures have a time axis\n");
}

TEST_CASE("issue_12 the style reads budgets as written in scenarios (GiB on the axis), the "
          "window and width options, and keeps op kinds apart in grey" *
          doctest::skip(kNoMatplotlib)) {
  const int checked = std::system(
      fmt::format(
          "cd '{}/plots' && /usr/bin/python3 -c '"
          "import ppsim_style as s, itertools, math\n"
          "c = \"cluster.memory\"\n"
          "v = lambda text: s.budget_value({{c: text}}, c, True)\n"
          "assert v(\"80GiB\") == 80 and v(\"85899345920\") == 80 and v(\"1.5TiB\") == 1536\n"
          "assert v(\"3/2TiB\") == 1536 and v(\"8e10\") == 8e10 / 2**30\n"
          "assert s.is_byte_column([{{\"x\": \"512MiB\"}}], \"x\")\n"
          "assert not s.is_byte_column([{{\"x\": \"4\"}}], \"x\")\n"
          "assert s.budget_label(\"x\", True) == \"x (GiB)\"\n"
          "assert s.budget_label(c, True) == \"memory budget per device (GiB)\"\n"
          "assert s.time_window(\"100:\") == (100, math.inf) and s.time_window(\":50\") == (0, "
          "50)\n"
          "def refused(parse, text):\n"
          "    try:\n"
          "        parse(text)\n"
          "    except s.argparse.ArgumentTypeError as error:\n"
          "        return str(error)\n"
          "assert refused(s.time_window, \"40\") == \"expected START:END in ms such as 0:50, got "
          "\\x2740\\x27\"\n"
          "assert refused(s.time_window, \"40:20\") == \"START must come before END, got "
          "\\x2740:20\\x27\"\n"
          "assert refused(s.width_inches, \"wide\") == \"expected a width in inches from 1 to 100, "
          "got "
          "\\x27wide\\x27\"\n"
          // The op kinds a schedule mixes are ~40 grey levels apart: they stay apart in print.
          "kinds = [\"F\", \"OV\", \"B\", \"BW\", \"W\"]\n"
          "assert all(abs(s.lightness(s.OP_COLORS[a]) - s.lightness(s.OP_COLORS[b])) > 35 "
          "for a, b in itertools.combinations(kinds, 2))\n"
          "assert all(s.op_hatch(k, 0) == s.RECOMPUTE_HATCH for k in [\"R\", \"RW\", \"RBW\"])\n"
          "assert len({{s.op_hatch(\"F\", c) for c in range(len(s.CHUNK_HATCHES))}}) == "
          "len(s.CHUNK_HATCHES)\n"
          "'",
          PPSIM_SOURCE_DIR)
          .c_str());
  CHECK(checked == 0);
}

TEST_CASE("ppsim plot: a bad cell is one line naming it, and the old figure survives it" *
          doctest::skip(kNoMatplotlib)) {
  const Scratch scratch("plots-atomic");
  scratch.write("fig.pdf", "old figure");
  scratch.write(
      "r.csv",
      "run,run_id,schedule,p,m,v,remat_policy,feasible,cluster.K,bubble_ratio,span_bubble_ratio\n"
      "0,aa,1f1b,4,8,1,none,true,2,abc,0.1\n");
  const auto failed = scratch.ppsim("plot r.csv --kind bubble-vs-k -o fig.pdf");
  CHECK(failed.exit_code == 1);
  // issue_32: once Python's "ValueError: could not convert string to float: 'abc'".
  CHECK(failed.err ==
        "ppsim: error: r.csv:2: field 'bubble_ratio': expected a finite number, got 'abc'\n");
  CHECK(scratch.read("fig.pdf") == "old figure");
  CHECK_FALSE(scratch.exists("fig.png"));
  // No temporary file is left beside it.
  for (const auto &entry : std::filesystem::directory_iterator(scratch.file("")))
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
}

TEST_CASE("issue_32 ppsim plot: NaN, a cut row and a figure name without a format are refused" *
          doctest::skip(kNoMatplotlib)) {
  const Scratch scratch("plots-refusals");
  const std::string header =
      "run,run_id,schedule,p,m,v,remat_policy,feasible,cluster.K,bubble_ratio,span_bubble_ratio\n";
  scratch.write("nan.csv", header + "0,aa,1f1b,4,8,1,none,true,2,nan,0.1\n");
  scratch.write("cut.csv", header + "0,aa,1f1b,4,8,1,none,true,2,0.1,0.1\n1,bb,zb-h1,4,8,1,no");
  scratch.write("good.csv", header + "0,aa,1f1b,4,8,1,none,true,2,0.1,0.1\n");
  CHECK(scratch.ppsim("plot nan.csv --kind bubble-vs-k -o fig.pdf").err ==
        "ppsim: error: nan.csv:2: field 'bubble_ratio': expected a finite number, got 'nan'\n");
  CHECK(scratch.ppsim("plot cut.csv --kind bubble-vs-k -o fig.pdf").err ==
        "ppsim: error: cut.csv:3: the row has 7 cells where the header has 11: is the file cut "
        "short?\n");
  const auto unnamed = scratch.ppsim("plot good.csv --kind bubble-vs-k -o fig");
  CHECK(unnamed.exit_code == 1);
  CHECK(unnamed.err ==
        "ppsim: error: -o fig: expected a figure file ending in .pdf, .svg, .png\n");
  CHECK_FALSE(scratch.exists("fig.pdf"));
}

TEST_CASE("ppsim plot writes only the figure it is asked for: a PNG beside it needs --png" *
          doctest::skip(kNoMatplotlib)) {
  const Scratch scratch("plots-png");
  scratch.write("base.toml", "[model]\nF = 1\nB = 1\nW = 1\n[cluster]\ndevices = 4\n");
  REQUIRE(scratch.ppsim("simulate base.toml --schedule zb-h1 -m 8 --trace trace.json").exit_code ==
          0);
  scratch.write("fig.png", "the user's own picture");
  REQUIRE(scratch.ppsim("plot trace.json --kind gantt -o fig.pdf").exit_code == 0);
  check_figure(scratch, "fig", true);
  CHECK(scratch.read("fig.png") == "the user's own picture");
  REQUIRE(scratch.ppsim("plot trace.json --kind gantt -o fig.pdf --png").exit_code == 0);
  CHECK(scratch.read("fig.png").rfind("\x89PNG", 0) == 0);
}

TEST_CASE("issue_17 ppsim plot: a device input and an output that is the input") {
  const Scratch scratch("plots-hostile");
  // Refused before the script runs (no matplotlib needed).
  const auto device = scratch.ppsim("plot /dev/zero --kind gantt -o g.pdf");
  CHECK(device.exit_code == 1);
  CHECK(device.err == "ppsim: error: /dev/zero: is a device, not an input file\n");
  scratch.write("r.csv", "run,schedule\n");
  const auto same = scratch.ppsim("plot r.csv --kind bubble-vs-k -o r.csv");
  CHECK(same.err == "ppsim: error: r.csv: field '-o': is the input file r.csv; write the output to "
                    "another file\n");
}

TEST_CASE("issue_17 ppsim plot: a bad option or column, and an orphan" *
          doctest::skip(kNoMatplotlib)) {
  const Scratch scratch("plots-hostile-script");
  scratch.write(
      "r.csv",
      "run,run_id,schedule,p,m,v,remat_policy,feasible,cluster.K,bubble_ratio,span_bubble_ratio\n"
      "0,aa,1f1b,4,8,1,none,true,2,0.1,0.1\n1,bb,1f1b,4,8,1,none,true,4,0.05,0.05\n");
  const auto metric = scratch.ppsim("plot r.csv --kind bubble-vs-k -o g.pdf --metric bogus");
  CHECK(metric.exit_code == 1);
  CHECK(metric.err ==
        "ppsim: error: argument --metric: invalid choice: 'bogus' (choose from 'bubble_ratio', "
        "'span_bubble_ratio')\n");
  const auto column = scratch.ppsim("plot r.csv --kind bubble-vs-k -o g.pdf --x bogus");
  CHECK(column.exit_code == 1);
  CHECK(column.err.starts_with(
      "ppsim: error: r.csv: --x: no column 'bogus' in the file (its columns: run, run_id,"));
  // The temporary figure of a killed plot (no such process) is removed by the next one.
  scratch.write("g.tmp3999999.pdf", "half a figure");
  REQUIRE(scratch.ppsim("plot r.csv --kind bubble-vs-k -o g.pdf").exit_code == 0);
  CHECK_FALSE(scratch.exists("g.tmp3999999.pdf"));
  check_figure(scratch, "g");
}

TEST_CASE("issue_17 ppsim plot names a script that failed without its own line by its last line" *
          doctest::skip(kNoMatplotlib)) {
  const Scratch scratch("plots-fallback");
  std::filesystem::create_directories(scratch.file("plots"));
  scratch.write(
      "plots/gantt.py",
      "import sys\nprint('first', file=sys.stderr)\nprint('the reason', file=sys.stderr)\n"
      "sys.exit(3)\n");
  scratch.write("t.json", "{}");
  const int status = std::system(
      fmt::format("cd '{}' && PPSIM_PLOTS_DIR=plots '{}' plot t.json --kind gantt -o g.pdf "
                  ">out.txt 2>err.txt",
                  scratch.file(""), PPSIM_BINARY)
          .c_str());
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(scratch.read("err.txt") == "ppsim: error: the gantt.py script failed: the reason\n");
}

} // namespace
} // namespace ppsim
