// `ppsim compare`: every schedule (or a chosen list) on one scenario, for one or more memory
// caps K, side by side; the best feasible one can be drawn as a Gantt chart.
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/run_pipeline.h"
#include "cli/scenario_options.h"

#include "sim/error.h"
#include "sim/io/report.h"
#include "sim/io/scenario_toml.h"
#include "sim/io/svg.h"
#include "sim/schedules/registry.h"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <ostream>
#include <sstream>

namespace ppsim::cli {
namespace po = boost::program_options;
namespace {

struct Row {
  std::string schedule;
  std::optional<double> cap;
  std::optional<PreparedRun> run;
  std::optional<Simulation> simulation;
  std::optional<BoundsReport> bounds;
  std::string unavailable;  // why the schedule cannot run here (its constraints)
};

std::vector<std::string> split_list(const std::string &text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// The bounds assume the memory cap holds, so a run over it has no bound to be compared with.
std::optional<Ticks> valid_bound(const Row &row) {
  if (!row.bounds || !row.simulation || !row.simulation->metrics.feasible) return std::nullopt;
  return row.bounds->best_lower_bound;
}

double max_peak(const Simulation &simulation) {
  double peak = 0;
  for (const DeviceMetrics &device : simulation.metrics.devices) peak = std::max(peak, device.peak_activations);
  return peak;
}

} // namespace

int run_compare(const Args &args, std::ostream &out, std::ostream & /*err*/) {
  po::options_description options("ppsim compare [SCENARIO.toml] [options]");
  options.add_options()(
      "schedules", po::value<std::string>()->value_name("A,B,..."), "schedules to compare (default: all)")(
      "caps", po::value<std::string>()->value_name("K1,K2,..."), "memory caps K to compare under")(
      "format", po::value<std::string>()->default_value("text"), "text or csv")(
      "svg", po::value<std::string>()->value_name("FILE"), "Gantt chart of the fastest feasible schedule");
  const auto parsed = parse_scenario_command(args, options, out);
  if (!parsed) return kOk;
  const po::variables_map &values = *parsed;
  const std::string format = checked_choice(values, "format", {"text", "csv"});
  const ScenarioInput base = scenario_from_options(values);
  std::vector<std::string> names;
  if (values.count("schedules")) {
    names = split_list(values["schedules"].as<std::string>());
    for (const std::string &name : names) find_schedule(name);
  } else {
    for (const ScheduleInfo &info : schedule_registry()) names.push_back(info.name);
  }
  std::vector<std::optional<double>> caps{base.cap_activations};
  if (values.count("caps")) {
    caps.clear();
    for (const std::string &text : split_list(values["caps"].as<std::string>())) {
      ScenarioInput probe;
      set_scenario_field_from_text(probe, "cluster.K", text, {"", 0, "--caps"});
      caps.push_back(probe.cap_activations);
    }
  }

  std::vector<Row> rows;
  for (const std::optional<double> &cap : caps) {
    for (const std::string &name : names) {
      ScenarioInput input = base;
      input.schedule = name;
      input.schedule_file.clear();
      input.cap_activations = cap;
      Row row{name, cap, std::nullopt, std::nullopt, std::nullopt, ""};
      try {
        row.run = prepare_policy_run(input);
        row.simulation = simulate(row.run->scenario, row.run->schedule, SimulateOptions{values.count("svg") > 0});
        row.bounds = bounds_for_run(input, *row.run);
      } catch (const Error &error) {
        row.unavailable = error.sentence();
        row.run.reset();
      }
      rows.push_back(std::move(row));
    }
  }
  // Fastest first within each cap; unavailable schedules last.
  std::stable_sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
    if (a.cap != b.cap) return false;
    if (a.simulation.has_value() != b.simulation.has_value()) return a.simulation.has_value();
    if (!a.simulation) return false;
    if (a.simulation->metrics.feasible != b.simulation->metrics.feasible) return a.simulation->metrics.feasible;
    return a.simulation->metrics.makespan < b.simulation->metrics.makespan;
  });

  const auto cap_text = [](const std::optional<double> &cap) { return cap ? fmt::format("{}", *cap) : std::string("none"); };
  if (format == "csv") {
    out << "K," << report_csv_header() << ",unavailable\n";
    for (const Row &row : rows) {
      if (row.simulation) {
        const SimulationReport report{row.run->scenario, row.run->schedule, *row.simulation, valid_bound(row), {}};
        out << cap_text(row.cap) << "," << report_csv_row(report) << ",\n";
      } else {
        out << fmt::format("{},{},{},{},,,,,,,,,,,,\"{}\"\n", cap_text(row.cap), row.schedule, base.devices,
                           base.microbatches, row.unavailable);
      }
    }
  } else {
    std::optional<double> current;
    bool first = true;
    for (const Row &row : rows) {
      if (first || row.cap != current) {
        out << fmt::format("{}memory cap K = {}  (p={} m={})\n", first ? "" : "\n", cap_text(row.cap), base.devices,
                           base.microbatches);
        out << fmt::format("{:<16} {:>10} {:>10} {:>8} {:>8} {:>9} {:>8} {:>10} {:>7}\n", "schedule", "makespan",
                           "max span", "bubble", "span bub", "peak act", "fits K", "bound", "gap");
        current = row.cap;
        first = false;
      }
      if (!row.simulation) {
        out << fmt::format("{:<16} n/a: {}\n", row.schedule, row.unavailable);
        continue;
      }
      const Metrics &metrics = row.simulation->metrics;
      const TimeScale &scale = row.run->scenario.time_scale;
      out << fmt::format("{:<16} {:>10} {:>10} {:>7.2f}% {:>7.2f}% {:>9.4g} {:>8} {:>10} {:>7}\n", row.schedule,
                         scale.format(metrics.makespan), scale.format(metrics.max_span), 100 * metrics.bubble_ratio,
                         100 * metrics.span_bubble_ratio, max_peak(*row.simulation), metrics.feasible ? "yes" : "no",
                         valid_bound(row) ? scale.format(row.bounds->best_lower_bound) : "-",
                         valid_bound(row) ? fmt::format("{:.2f}%", 100 * makespan_gap(metrics.makespan, *row.bounds))
                                          : "-");
    }
  }
  if (values.count("svg")) {
    const auto best = std::find_if(rows.begin(), rows.end(), [](const Row &row) {
      return row.simulation && row.simulation->metrics.feasible;
    });
    if (best == rows.end()) throw Error("no schedule fits the memory cap, so there is no chart to draw");
    write_file_atomically(values["svg"].as<std::string>(),
                          gantt_svg(best->run->scenario, best->run->schedule, *best->simulation,
                                    GanttOptions{.time_unit = base.time_unit}));
    if (format == "text") {
      out << fmt::format("\nGantt chart of {} written to {}\n", best->schedule, values["svg"].as<std::string>());
    }
  }
  return kOk;
}

} // namespace ppsim::cli
