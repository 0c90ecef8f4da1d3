// `ppsim plot`: draws a figure from sweep results or a trace by running the matching matplotlib
// script of plots/ with Debian's /usr/bin/python3 (the one python3-matplotlib is installed for).
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/program.h"
#include "cli/scenario_options.h"

#include "base/text_file.h"

#include "base/error.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <ostream>
#include <string_view>
#include <vector>

namespace ppsim::cli {
namespace po = boost::program_options;
namespace {

constexpr const char *kPython = "/usr/bin/python3";

struct PlotKind {
  std::string_view name;
  std::string_view script;
  std::string_view input; // what the input file is
  bool has_time_axis;     // a figure of one run over time, which --time-window cuts
};

constexpr std::array<PlotKind, 7> kKinds{{
    {"gantt", "gantt.py", "a trace from ppsim simulate --trace", true},
    {"memory", "memory.py", "a trace from ppsim simulate --trace", true},
    {"bubble-vs-k", "bubble_vs_k.py", "sweep results over cluster.K", false},
    {"makespan-vs-bound", "makespan_vs_bound.py", "sweep results", false},
    {"gap-vs-bound", "gap_vs_bound.py", "sweep results", false},
    {"ranking-vs-budget", "ranking_vs_budget.py", "sweep results over a budget", false},
    {"remat-overhead", "remat_overhead.py", "sweep results over a budget with remat policies",
     false},
}};

// The plots/ folder: $PPSIM_PLOTS_DIR, else the source tree this binary was built from.
std::filesystem::path plots_directory() {
  if (const char *directory = std::getenv("PPSIM_PLOTS_DIR"))
    return directory;
  return PPSIM_PLOTS_DIR;
}

} // namespace

int run_plot(const Args &args, std::ostream &out, std::ostream &err) {
  std::string kinds_help = "figure:";
  for (const PlotKind &kind : kKinds)
    kinds_help += fmt::format("\n  {:<18} from {}", kind.name, kind.input);
  po::options_description options("ppsim plot INPUT --kind KIND -o FIG.pdf [--png]");
  options.add_options()("help,h", "show this help")(
      "kind,k", po::value<std::string>()->value_name("KIND"),
      kinds_help.c_str())("output,o", po::value<std::string>()->value_name("FIG.pdf"),
                          "figure file (vector PDF; SVG and PNG also work)")(
      "x", po::value<std::string>()->value_name("COLUMN"),
      "budget column (default cluster.K, then cluster.memory)")(
      "metric", po::value<std::string>()->value_name("NAME"),
      "bubble-vs-k: bubble_ratio or span_bubble_ratio")(
      "title", po::value<std::string>()->value_name("TEXT"),
      "figure title, above the legend")("width", po::value<std::string>()->value_name("INCHES"),
                                        "figure width (default: 3.4, a column; gantt 7, a page)")(
      "time-window", po::value<std::string>()->value_name("START:END"),
      "gantt, memory: draw only this span of the run (ms; an end may be left out)")(
      "png", "also write a 300 dpi PNG beside the figure (FIG.png)")(
      "input", po::value<std::string>()->value_name("INPUT"), "results CSV or trace JSON");
  const auto parsed = parse_file_command(args, options, "input", out);
  if (!parsed)
    return kOk;
  const po::variables_map &values = *parsed;
  if (!values.count("input"))
    throw Error("", 0, "",
                "missing the input file (ppsim plot RESULTS.csv --kind KIND -o FIG.pdf)");
  if (!values.count("kind"))
    throw Error("", 0, "--kind", "missing (see ppsim plot --help)");
  if (!values.count("output"))
    throw Error("", 0, "-o", "missing the figure file");
  const std::string name = values["kind"].as<std::string>();
  const auto kind = std::find_if(kKinds.begin(), kKinds.end(),
                                 [&name](const PlotKind &k) { return k.name == name; });
  if (kind == kKinds.end()) {
    std::vector<std::string> names;
    for (const PlotKind &k : kKinds)
      names.emplace_back(k.name);
    throw Error("", 0, "--kind",
                unknown_name("figure", name, names,
                             fmt::format(" (available: {})", fmt::join(names, ", "))));
  }
  if (values.count("time-window") && !kind->has_time_axis)
    throw Error("", 0, "--time-window", "only the gantt and memory figures have a time axis");
  const std::string input = values["input"].as<std::string>();
  std::error_code status_error;
  const std::filesystem::file_status kind_of_input = std::filesystem::status(input, status_error);
  if (!std::filesystem::exists(kind_of_input))
    throw Error(input, 0, "", "no such file");
  // The script reads what every ppsim reader reads (base/text_file.h): a file up to 1 GiB.
  if (std::filesystem::is_directory(kind_of_input))
    throw Error(input, 0, "", "is a directory, not an input file");
  if (std::filesystem::is_character_file(kind_of_input) ||
      std::filesystem::is_block_file(kind_of_input))
    throw Error(input, 0, "", "is a device, not an input file");
  if (std::filesystem::is_regular_file(kind_of_input) &&
      std::filesystem::file_size(input, status_error) > kMaxInputFileBytes)
    throw Error(
        input, 0, "",
        fmt::format("larger than the {} GiB an input file may have", kMaxInputFileBytes >> 30));
  check_outputs(given_outputs(values, {"output"}), {input});
  if (run_program({kPython, "-c", "import matplotlib"}) != 0) {
    throw Error(fmt::format(
        "plotting needs matplotlib for {} (Debian: apt-get install python3-matplotlib)", kPython));
  }
  const std::filesystem::path script = plots_directory() / kind->script;
  if (!std::filesystem::exists(script)) {
    throw Error(script.string(), 0, "",
                "plot script not found (set PPSIM_PLOTS_DIR to the plots/ folder)");
  }
  std::vector<std::string> command{kPython, script.string(), input, "-o",
                                   values["output"].as<std::string>()};
  // The script checks the values: it also runs on its own (docs/plot.md).
  for (const char *option : {"x", "metric", "title", "width", "time-window"}) {
    // One `--name=value` word, so that a value starting with '-' is not read as an option.
    if (values.count(option))
      command.push_back(fmt::format("--{}={}", option, values[option].as<std::string>()));
  }
  if (values.count("png"))
    command.emplace_back("--png");
  // The script's one-line error ("ppsim plot: error: ...", also for what it did not foresee)
  // becomes ppsim's; anything else it printed (a warning) is passed on.
  const std::string errors =
      (std::filesystem::temp_directory_path() / fmt::format("ppsim-plot-{}.err", ::getpid()))
          .string();
  const int status = run_program(command, "", errors);
  std::string printed;
  {
    std::ifstream in(errors);
    printed.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::filesystem::remove(errors);
  if (status == 0) {
    err << printed;
    return kOk;
  }
  constexpr std::string_view kPrefix = "ppsim plot: error: ";
  const auto at = printed.rfind(kPrefix);
  if (at == std::string::npos) {
    // Not the script's own line (killed, or failing before it set up its errors): its last line.
    std::string last = printed;
    last.erase(last.find_last_not_of("\n") + 1);
    last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
    throw Error(fmt::format("the {} script failed{}{}", kind->script,
                            status < 0 ? " to start or was killed" : "",
                            last.empty() ? "" : ": " + last));
  }
  std::string message = printed.substr(at + kPrefix.size());
  message.erase(message.find_last_not_of("\n") + 1);
  throw Error(message);
}

} // namespace ppsim::cli
