// `ppsim optimal`: the exact minimum makespan of a tiny scenario (docs/bounds.md, "Exact optimum"),
// with the per-device orders that reach it, to validate bounds and schedules.
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/scenario_options.h"
#include "run/prepare.h"
#include "run/synthesis.h"

#include "base/error.h"
#include "bounds/analyzer.h"
#include "bounds/exact.h"
#include "sim/io/report.h"
#include "sim/schedules/registry.h"

#include <fmt/format.h>
#include <ostream>
#include <vector>

namespace ppsim::cli {
namespace po = boost::program_options;

constexpr std::int64_t kMaxStartVariables = std::int64_t{1} << 17;
namespace {

std::vector<std::string> device_orders(const Schedule &schedule) {
  std::vector<std::string> rows;
  for (const std::vector<Op> &ops : schedule.device_ops) {
    std::vector<std::string> names;
    for (const Op &op : ops)
      names.push_back(describe(op));
    rows.push_back(fmt::format("{}", fmt::join(names, " ")));
  }
  return rows;
}

} // namespace

int run_optimal(const Args &args, std::ostream &out, std::ostream &err) {
  po::options_description options("ppsim optimal [SCENARIO.toml] [options]");
  ExactOptions exact;
  options.add_options()("format", po::value<std::string>()->default_value("text"), "text or json")(
      "time-limit", po::value<double>()->default_value(exact.time_limit_seconds),
      "seconds for the ILP; past it the best schedule found is reported unproven")(
      "max-variables", po::value<std::int64_t>()->default_value(exact.max_start_variables),
      "size guard: refuse instances whose ILP needs more start-time variables");
  add_quiet_option(options);
  const auto parsed = parse_scenario_command(args, options, out);
  if (!parsed)
    return kOk;
  const po::variables_map &values = *parsed;
  const std::string format = checked_choice(values, "format", {"text", "json"});
  exact.time_limit_seconds = values["time-limit"].as<double>();
  if (!(exact.time_limit_seconds > 0))
    throw Error("", 0, "--time-limit", "expected a positive number of seconds");
  // Each start binary brings a row entry per tick it covers (about 20 KB each in all, 177 600 of
  // them took 3.8 GB): past 2^17 the model alone takes gigabytes, so the guard itself is bounded
  // (docs/bounds.md, docs/reliability.md).
  exact.max_start_variables = checked_integer(values, "max-variables", 1, kMaxStartVariables);

  const RunInput input = scenario_from_options(values);
  refuse_chosen_recomputation(input, "optimal", false);
  exact.node_limit = input.remat_node_limit;
  const PreparedRun run = prepare_run(input);
  const BoundsReport bounds = bounds_for_run(run);
  Progress progress(err, progress_mode(values, err), "optimal", "horizons");
  exact.progress = progress.callback();
  const ExactResult result = seeded_exact_optimum(run.scenario, bounds.backward, exact);
  progress.clear();
  const std::string written =
      fmt::format("the {} and its device orders to standard output",
                  result.proven_optimal ? "optimal schedule" : "best schedule found");
  const TimeScale &scale = run.scenario.time_scale;
  const std::vector<std::string> orders = device_orders(result.schedule);
  // How far the schedule reported is from what is proven (0 when proven optimal).
  const double gap = gap_to_bound(result.makespan, result.lower_bound);
  if (format == "json") {
    std::vector<std::string> rows;
    for (const std::string &row : orders)
      rows.push_back(json_string(row));
    out << fmt::format(
        "{{\"optimal_makespan\": {}, \"proven_optimal\": {}, \"lower_bound\": {}, "
        "\"best_lower_bound\": {}, \"method\": {}, \"incumbent\": {}, \"solve_seconds\": {}, "
        "\"gap_to_lower_bound\": {}, \"device_orders\": [{}]}}\n",
        scale.json(result.makespan), result.proven_optimal, scale.json(result.lower_bound),
        scale.json(bounds.best_lower_bound), json_string(result.method),
        json_string(result.incumbent), json_number(result.solve_seconds), json_number(gap),
        fmt::join(rows, ", "));
    progress.finish(written);
    return kOk;
  }
  out << fmt::format("optimal makespan: {}{}\n", scale.readable(result.makespan),
                     result.proven_optimal
                         ? ""
                         : fmt::format(" (not proven: the optimum is at least {}; this schedule "
                                       "is {:.2f}% above it)",
                                       scale.readable(result.lower_bound), 100 * gap));
  out << fmt::format("best lower bound: {} (gap {:.4g})\n", scale.readable(bounds.best_lower_bound),
                     makespan_gap(result.makespan, bounds));
  out << fmt::format("method: {}; horizon from: {}; {} start-time variables; {:.2f} s\n",
                     result.method, result.incumbent, result.start_variables, result.solve_seconds);
  for (std::size_t g = 0; g < orders.size(); ++g)
    out << fmt::format("device {}: {}\n", g, orders[g]);
  progress.finish(written);
  return kOk;
}

} // namespace ppsim::cli
