#pragma once
// Text, JSON and CSV reports of one simulation (docs/model.md, "Command line and JSON"). Pure
// functions to strings; the CLI decides where they go.
#include "sim/metrics.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim {

/// Everything a report shows; `best_lower_bound` comes from the bounds library when linked.
struct SimulationReport {
  const Scenario &scenario;
  const Schedule &schedule;
  const Simulation &simulation;
  std::optional<Ticks> best_lower_bound;
  std::vector<std::string> warnings;
};

/// A readable summary with a per-device table.
std::string report_text(const SimulationReport &report);
/// The JSON object of docs/model.md, "Command line and JSON" (plus ideal, time unit, warnings and
/// the bound).
std::string report_json(const SimulationReport &report);
/// Stable CSV columns for sweeps; report_csv_row has no trailing newline.
std::string report_csv_header();
std::string report_csv_row(const SimulationReport &report);
/// The same columns as a list (names, and one report's values in that order), for sweeps.
std::vector<std::string> report_csv_columns();
std::vector<std::string> report_csv_values(const SimulationReport &report);

/// A JSON string literal with escapes (shared by the JSON writers in io/).
std::string json_string(std::string_view text);
/// A JSON number; non-finite values become null.
std::string json_number(double value);

} // namespace ppsim
