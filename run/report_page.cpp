#include "run/report_page.h"
#include "report_template.h" // generated from run/report/ (run/CMakeLists.txt)

#include "base/assert.h"
#include "sim/critical_path.h"
#include "sim/io/timeline_json.h"
#include "sim/memory.h"

#include <fmt/format.h>

namespace ppsim {
namespace {

constexpr std::string_view kDataPlaceholder = "@PPSIM_REPORT_DATA@";

} // namespace

std::string report_run_json(const SimulationReport &report, std::string_view policy) {
  const Scenario &scenario = report.scenario;
  const bool bytes = scenario.memory_model == MemoryModel::bytes && scenario.bytes;
  const Metrics &metrics = report.simulation.metrics;
  const BubbleExplanation explanation =
      explain_bubbles(scenario, report.schedule, report.simulation.timing);
  return fmt::format(
      "{{\"schedule\": {}, \"policy\": {}, \"peak\": {}, \"summary\": {}, "
      "\"timeline\": {}}}",
      json_string(report.schedule.name), json_string(policy),
      json_number(bytes ? metrics.max_peak_bytes().value_or(0) : metrics.max_peak_activations()),
      report_json(report),
      timeline_json(scenario, report.schedule, report.simulation, explanation));
}

std::string report_unavailable_json(std::string_view schedule, std::string_view policy,
                                    std::string_view reason) {
  return fmt::format("{{\"schedule\": {}, \"policy\": {}, \"unavailable\": {}}}",
                     json_string(schedule), json_string(policy), json_string(reason));
}

std::string report_data_json(const ReportHeader &header, const std::vector<ReportTable> &tables) {
  std::vector<std::string> table_objects;
  for (const ReportTable &table : tables) {
    table_objects.push_back(fmt::format("{{\"heading\": {}, \"rows\": [\n{}]}}",
                                        json_string(table.heading), fmt::join(table.rows, ",\n")));
  }
  return fmt::format("{{\"command\": {}, \"model\": {}, \"p\": {}, \"m\": {}, \"time_unit\": {}, "
                     "\"tables\": [{}]}}",
                     json_string(header.command), json_string(header.model), header.devices,
                     header.microbatches, json_string(header.time_unit),
                     fmt::join(table_objects, ",\n"));
}

std::string report_page(std::string_view data_json) {
  const std::string_view page = kReportTemplate;
  const std::size_t at = page.find(kDataPlaceholder);
  PPSIM_ASSERT(at != std::string_view::npos &&
               page.find(kDataPlaceholder, at + 1) == std::string_view::npos);
  std::string out(page.substr(0, at));
  out.reserve(page.size() + data_json.size() + data_json.size() / 16);
  for (const char c : data_json) {
    if (c == '<')
      out += "\\u003c"; // `<` occurs only inside JSON strings, where the escape means the same
    else
      out += c;
  }
  out += page.substr(at + kDataPlaceholder.size());
  return out;
}

std::string rankings_page(const RunInput &base, const std::vector<Ranking> &rankings) {
  std::vector<ReportTable> report_tables;
  for (const Ranking &ranking : rankings) {
    ReportTable table{ranking_heading(base, ranking), {}};
    for (const RankedRun &row : ranking.runs) {
      table.rows.push_back(
          row.ran() ? report_run_json(row.evaluation->report(), row.policy)
                    : report_unavailable_json(row.schedule, row.policy, row.unavailable));
    }
    report_tables.push_back(std::move(table));
  }
  return report_page(report_data_json(
      ReportHeader{"compare", base.model_name, base.devices, base.microbatches, base.time_unit},
      report_tables));
}

std::string one_table_page(const ReportHeader &header, const Scenario &scenario,
                           std::vector<std::string> rows) {
  const std::optional<double> cap = checked_track(scenario).cap;
  std::string heading = cap ? describe_cap(scenario, *cap) : std::string("no memory cap");
  return report_page(report_data_json(header, {ReportTable{std::move(heading), std::move(rows)}}));
}

} // namespace ppsim
