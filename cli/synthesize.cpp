// `ppsim synthesize`: a schedule of the scenario's placement and backward form, searched under
// the memory cap, with the best lower bound and the gap (docs/synthesis.md).
#include "cli/commands.h"
#include "cli/output_file.h"
#include "run/report_page.h"
#include "cli/scenario_options.h"
#include "run/prepare.h"
#include "run/synthesis.h"

#include "base/error.h"
#include "sim/io/report.h"
#include "sim/io/svg.h"
#include "sim/io/torch_csv.h"
#include "sim/io/trace.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>
#include <ostream>

namespace ppsim::cli {
namespace po = boost::program_options;

namespace {

std::string synthesis_line(const Scenario &scenario, const SynthesisResult &result) {
  const TimeScale &scale = scenario.time_scale;
  // The fastest known schedule is named when the winning search started from a slower one.
  const std::string best_known = result.best_known_makespan < result.seed_makespan
                                     ? fmt::format(" (fastest known: {}, {})", result.best_known,
                                                   scale.readable(result.best_known_makespan))
                                     : "";
  // What a limit cut short besides the search (a seed's ILP, the exact optimum).
  const std::string cut_short =
      result.cut_short.empty() ? ""
                               : fmt::format(" (cut short: {})", fmt::join(result.cut_short, ", "));
  return fmt::format("synthesis: seed {} (makespan {}){}, {} improving moves in {} candidates, "
                     "stopped: {}{}, bound {}, {:.2f} s\n",
                     result.seed, scale.readable(result.seed_makespan), best_known,
                     result.improvements, result.evaluations, describe(result.stop), cut_short,
                     result.bound_name, result.seconds);
}

const char *form_words(BackwardForm form) {
  return form == BackwardForm::full ? "full backward (B and W fused)" : "split backward (B, W)";
}

// The forms searched besides the winner's (docs/synthesis.md, "Backward forms").
std::string other_forms_line(const std::vector<SearchedForm> &searched) {
  std::string line;
  for (std::size_t k = 1; k < searched.size(); ++k) {
    const SearchedForm &other = searched[k];
    const TimeScale &scale = other.run.scenario.time_scale;
    // Rationals of two tick scales: equal when neither is below the other.
    const Rational slower = scale.exact_units(other.result.makespan);
    const Rational faster =
        searched.front().run.scenario.time_scale.exact_units(searched.front().result.makespan);
    const bool tie = !(faster < slower);
    line += fmt::format("also searched: the {} of schedule {}, makespan {}, bound {} ({}); the {} "
                        "is {}\n",
                        form_words(other.form), other.run.input.schedule,
                        scale.readable(other.result.makespan),
                        scale.readable(other.form_lower_bound), other.form_bound_name,
                        form_words(searched.front().form), tie ? "as fast" : "faster");
  }
  return line;
}

} // namespace

int run_synthesize(const Args &args, std::ostream &out, std::ostream &) {
  po::options_description options("ppsim synthesize [SCENARIO.toml] [options]");
  SynthesisOptions synthesis;
  options.add_options()("format", po::value<std::string>()->default_value("text"), "text or json")(
      "time-limit", po::value<double>()->default_value(synthesis.time_limit_seconds),
      "seconds for the search (and the exact optimum on tiny instances)")(
      "max-evaluations", po::value<std::int64_t>()->default_value(synthesis.max_evaluations),
      "candidates timed at most; reached first, the result is reproducible")(
      "seed", po::value<std::int64_t>()->default_value(1), "seed of the search's moves")(
      "max-variables",
      po::value<std::int64_t>()->default_value(synthesis.exact_max_start_variables),
      "size guard of the exact optimum on tiny instances (0: never run it)")(
      "torch-csv", po::value<std::string>()->value_name("FILE"),
      "write the orders as PyTorch pipelining CSV (without recomputation: see --plan)")(
      "plan", po::value<std::string>()->value_name("FILE"),
      "write the recomputation plan (CSV, docs/remat.md)")(
      "svg", po::value<std::string>()->value_name("FILE"), "write a Gantt chart")(
      "trace", po::value<std::string>()->value_name("FILE"), "write a Chrome trace (Perfetto)")(
      "report", po::value<std::string>()->value_name("FILE"),
      "write the interactive HTML page of the schedule (docs/report.md)");
  const auto parsed = parse_scenario_command(args, options, out);
  if (!parsed)
    return kOk;
  const po::variables_map &values = *parsed;
  const std::string format = checked_choice(values, "format", {"text", "json"});
  synthesis.time_limit_seconds = values["time-limit"].as<double>();
  if (!(synthesis.time_limit_seconds > 0))
    throw Error("", 0, "--time-limit", "expected a positive number of seconds");
  synthesis.max_evaluations =
      checked_integer(values, "max-evaluations", 0, std::numeric_limits<std::int64_t>::max());
  synthesis.seed = static_cast<std::uint64_t>(
      checked_integer(values, "seed", 0, std::numeric_limits<std::int64_t>::max()));

  // The same bound on the guard as `ppsim optimal` (docs/bounds.md, "Exact optimum").
  synthesis.exact_max_start_variables =
      checked_integer(values, "max-variables", 0, std::int64_t{1} << 17);

  const RunInput input = scenario_from_options(values);
  check_outputs(given_outputs(values, {"torch-csv", "plan", "svg", "trace", "report"}),
                scenario_input_files(values, input));
  // The placement and backward form are those of the scenario's schedule (and the split form
  // too when none is named and W is given).
  const std::vector<SearchedForm> searched = synthesize_input(input, synthesis);
  const PreparedRun &run = searched.front().run;
  const SynthesisResult &result = searched.front().result;

  const bool timelines = values.count("svg") || values.count("trace") || values.count("report");
  const Simulation simulation = simulate(run.scenario, result.schedule, SimulateOptions{timelines});
  const SimulationReport report{run.scenario, result.schedule, simulation, result.lower_bound,
                                run.warnings};
  // Every output is produced before any file is written, so a failure leaves nothing behind.
  std::vector<std::pair<std::string, std::string>> files;
  if (values.count("torch-csv") || values.count("plan")) {
    SynthesisFiles both = synthesis_files(run.scenario, result.schedule);
    if (values.count("torch-csv"))
      files.emplace_back(values["torch-csv"].as<std::string>(), std::move(both.torch_csv));
    if (values.count("plan"))
      files.emplace_back(values["plan"].as<std::string>(), std::move(both.plan_csv));
  }
  if (values.count("svg"))
    files.emplace_back(values["svg"].as<std::string>(),
                       gantt_svg(run.scenario, result.schedule, simulation,
                                 GanttOptions{.time_unit = input.time_unit}));
  if (values.count("trace"))
    files.emplace_back(
        values["trace"].as<std::string>(),
        chrome_trace_json(run.scenario, result.schedule, simulation, input.time_unit));
  if (values.count("report"))
    files.emplace_back(values["report"].as<std::string>(),
                       one_table_page(ReportHeader{"synthesize", input.model_name, input.devices,
                                                   input.microbatches, input.time_unit},
                                      run.scenario, {report_run_json(report, "none")}));
  for (const auto &[path, content] : files)
    write_file_atomically(path, content);
  if (format == "json")
    out << synthesis_json(searched, report_json(report));
  else
    out << report_text(report) << synthesis_line(run.scenario, result)
        << other_forms_line(searched)
        << (result.bounds_note.empty() ? "" : result.bounds_note + "\n")
        << (run.scenario.iteration_end.mode == IterationEnd::none
                ? ""
                : "the search minimises the makespan: the iteration above follows from it, and "
                  "`ppsim compare` ranks the registered schedules by iteration\n");
  return kOk;
}

} // namespace ppsim::cli
