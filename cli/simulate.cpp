// `ppsim simulate`: one scenario, one schedule -> metrics, and optionally a Gantt SVG, a
// Chrome trace and the critical-path explanation.
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/scenario_options.h"
#include "run/evaluate.h"

#include "base/error.h"
#include "sim/critical_path.h"
#include "sim/io/report.h"
#include "sim/io/svg.h"
#include "sim/io/trace.h"

#include <fmt/format.h>
#include <ostream>

namespace ppsim::cli {
namespace po = boost::program_options;

int run_simulate(const Args &args, std::ostream &out, std::ostream &err) {
  po::options_description options("ppsim simulate [SCENARIO.toml] [options]");
  options.add_options()("format", po::value<std::string>()->default_value("text"),
                        "text, json or csv")("svg", po::value<std::string>()->value_name("FILE"),
                                             "write a Gantt chart with memory curves")(
      "trace", po::value<std::string>()->value_name("FILE"), "write a Chrome trace (Perfetto)")(
      "explain", po::bool_switch(), "print the critical path and where the idle time goes");
  const auto parsed = parse_scenario_command(args, options, out);
  if (!parsed)
    return kOk;
  const po::variables_map &values = *parsed;
  const std::string format = checked_choice(values, "format", {"text", "json", "csv"});

  const RunInput input = scenario_from_options(values);
  if (input.remat_checkpoint_levels > 0 && input.remat_policy != "ilp" &&
      !input.remat_policy.starts_with("file:")) {
    input.fail("remat.checkpoint_levels", "checkpoint levels are options of a remat plan: give "
                                          "--remat ilp or a plan file (--remat file:PLAN)");
  }
  check_outputs(given_outputs(values, {"svg", "trace"}), scenario_input_files(values, input));
  // Every output is produced before any file is written, so a failure leaves nothing behind.
  const Evaluation evaluation = evaluate_run(
      input, EvaluateOptions{static_cast<bool>(values.count("svg") || values.count("trace"))});
  const PreparedRun &run = evaluation.run;
  const Simulation &simulation = evaluation.simulation;
  const SimulationReport report = evaluation.report();
  if (values.count("svg")) {
    write_file_atomically(values["svg"].as<std::string>(),
                          gantt_svg(run.scenario, run.schedule, simulation,
                                    GanttOptions{.time_unit = input.time_unit}));
  }
  if (values.count("trace")) {
    write_file_atomically(
        values["trace"].as<std::string>(),
        chrome_trace_json(run.scenario, run.schedule, simulation, input.time_unit));
  }
  if (format == "json") {
    out << report_json(report);
  } else if (format == "csv") {
    out << report_csv_header() << "\n" << report_csv_row(report) << "\n";
  } else {
    out << report_text(report);
  }
  if (values["explain"].as<bool>()) {
    const BubbleExplanation explanation =
        explain_bubbles(run.scenario, run.schedule, simulation.timing);
    if (!run.scenario.link.contention && !run.scenario.link.blocking &&
        explanation.longest_path != simulation.metrics.makespan) {
      err << fmt::format("ppsim: internal error: longest path {} differs from the makespan {}\n",
                         run.scenario.time_scale.readable(explanation.longest_path),
                         run.scenario.time_scale.readable(simulation.metrics.makespan));
      return kInternalError;
    }
    (format == "text" ? out : err) << explanation_text(run.scenario, run.schedule, explanation);
  }
  return kOk;
}

} // namespace ppsim::cli
