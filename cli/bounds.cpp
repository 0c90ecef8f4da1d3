// `ppsim bounds`: the lower bounds of docs/bounds.md for one scenario, the best of them and the
// selected schedule's closed form (text, or JSON with the keys of docs/model.md, "Command line and
// JSON"), and with
// --predict-memory the lifespan predictor beside the simulated peaks (docs/bounds.md, "Lifespan
// memory predictor").
#include "cli/commands.h"
#include "cli/scenario_options.h"
#include "run/prepare.h"

#include "base/decimal.h"
#include "base/error.h"
#include "bounds/analyzer.h"
#include "bounds/lifespan.h"
#include "sim/io/report.h"
#include "sim/metrics.h"

#include <fmt/format.h>
#include <optional>
#include <ostream>
#include <vector>

namespace ppsim::cli {
namespace po = boost::program_options;
namespace {

struct PeakComparison {
  MemoryPrediction prediction;
  std::vector<double> simulated;
};

std::string json_peaks(const std::vector<double> &values) {
  std::vector<std::string> numbers;
  for (const double value : values)
    numbers.push_back(json_number(value));
  return fmt::format("[{}]", fmt::join(numbers, ", "));
}

std::string bounds_json(const Scenario &scenario, const BoundsReport &report,
                        const std::optional<PeakComparison> &peaks) {
  const auto time = [&](Ticks t) { return scenario.time_scale.json(t); };
  std::vector<std::string> bounds;
  for (const NamedBound &bound : report.lower_bounds)
    bounds.push_back(fmt::format("{}: {}", json_string(bound.name), time(bound.value)));
  std::string text =
      fmt::format("{{\"lower_bounds\": {{{}}}, \"best_lower_bound\": {}, \"closed_form\": {}",
                  fmt::join(bounds, ", "), time(report.best_lower_bound),
                  report.closed_form ? time(*report.closed_form) : "null");
  if (const std::optional<Ticks> iteration =
          iteration_lower_bound(scenario, report.best_lower_bound))
    text += fmt::format(", \"iteration_lower_bound\": {}", time(*iteration));
  if (peaks) {
    text +=
        fmt::format(", \"memory_prediction\": {{\"period\": {}, \"predicted_peak\": {}, "
                    "\"lifespan_bound\": {}, \"simulated_peak\": {}}}",
                    time(peaks->prediction.period), json_peaks(peaks->prediction.predicted_peak),
                    json_peaks(peaks->prediction.lifespan_bound), json_peaks(peaks->simulated));
  }
  return text + "}\n";
}

std::string bounds_text(const Scenario &scenario, const std::string &schedule,
                        const BoundsReport &report, const std::optional<PeakComparison> &peaks) {
  const TimeScale &scale = scenario.time_scale;
  // The bounds know a cap in microbatch activations only: a byte budget is either turned into one
  // (the count model) or not in them, and the header says which.
  std::string cap = scenario.activations.cap && scenario.memory_model != MemoryModel::bytes
                        ? format_readable(*scenario.activations.cap)
                        : "none";
  if (scenario.cap_from_budget)
    cap += fmt::format(", of the {} budget", format_bytes(*scenario.cap_from_budget));
  else if (scenario.bytes && scenario.bytes->cap)
    cap += fmt::format("; the {} byte budget is not in these bounds",
                       format_bytes(*scenario.bytes->cap));
  std::string text =
      fmt::format("lower bounds on the makespan (p = {}, m = {}, K = {}):\n", scenario.devices,
                  scenario.total_microbatches(), cap);
  for (const NamedBound &bound : report.lower_bounds) {
    std::string note;
    if (bound.name == "LB2")
      note = report.lb2_integer_scan ? "  (integer scan)" : "  (LP relaxation)";
    if (!bound.bounds_makespan)
      note = "  (largest per-device span, not the makespan)";
    text += fmt::format("  {:<8} {}{}\n", bound.name, scale.readable(bound.value), note);
  }
  if (!report.cap_fits_one_activation)
    text += "  the cap is below one activation of some stage: no schedule fits\n";
  text += fmt::format("best lower bound: {}\n", scale.readable(report.best_lower_bound));
  if (const std::optional<Ticks> iteration =
          iteration_lower_bound(scenario, report.best_lower_bound))
    text += fmt::format("iteration lower bound: {} (the best bound and the iteration's end, "
                        "docs/model.md)\n",
                        scale.readable(*iteration));
  text += fmt::format("closed form ({}): {}\n", schedule,
                      report.closed_form ? scale.readable(*report.closed_form)
                                         : std::string("none for this schedule and scenario"));
  if (peaks) {
    text += fmt::format("memory prediction (period {}, microbatch {}):\n",
                        scale.readable(peaks->prediction.period),
                        peaks->prediction.reference_microbatch);
    text += "  device  predicted  lifespan bound  simulated\n";
    for (std::size_t g = 0; g < peaks->simulated.size(); ++g)
      text += fmt::format("  {:<6}  {:<9}  {:<14}  {}\n", g, peaks->prediction.predicted_peak[g],
                          peaks->prediction.lifespan_bound[g], peaks->simulated[g]);
  }
  return text;
}

} // namespace

int run_bounds(const Args &args, std::ostream &out, std::ostream & /*err*/) {
  po::options_description options("ppsim bounds [SCENARIO.toml] [options]");
  options.add_options()("format", po::value<std::string>()->default_value("text"), "text or json")(
      "predict-memory", po::bool_switch(),
      "simulate the schedule and compare the lifespan memory predictor with its peaks");
  const auto parsed = parse_scenario_command(args, options, out);
  if (!parsed)
    return kOk;
  const po::variables_map &values = *parsed;
  const std::string format = checked_choice(values, "format", {"text", "json"});

  const RunInput input = scenario_from_options(values);
  const bool predict_memory = values["predict-memory"].as<bool>();
  const PreparedRun run = prepare_for_bounds(input, predict_memory);
  const BoundsReport report = bounds_for_run(run);
  std::optional<PeakComparison> peaks;
  if (predict_memory) {
    const Simulation simulation = simulate(run.scenario, run.schedule);
    PeakComparison comparison{
        predict_peak_activations(run.scenario, run.schedule, simulation.timing), {}};
    for (const DeviceMetrics &device : simulation.metrics.devices)
      comparison.simulated.push_back(device.peak_activations);
    peaks = std::move(comparison);
  }
  out << (format == "json" ? bounds_json(run.scenario, report, peaks)
                           : bounds_text(run.scenario, run.schedule.name, report, peaks));
  return kOk;
}

} // namespace ppsim::cli
