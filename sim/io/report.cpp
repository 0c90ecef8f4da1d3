#include "sim/io/report.h"
#include "base/index.h"

#include "base/decimal.h"
#include "sim/memory.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ppsim {
namespace {

std::optional<double> gap(const SimulationReport &report) {
  if (!report.best_lower_bound || report.best_lower_bound->count() <= 0)
    return std::nullopt;
  return static_cast<double>(report.simulation.metrics.makespan.count()) /
             static_cast<double>(report.best_lower_bound->count()) -
         1.0;
}

std::string violation_op(const SimulationReport &report, const Violation &violation) {
  std::int32_t entry = violation.entry;
  for (const auto &ops : report.schedule.device_ops) {
    if (entry < static_cast<std::int32_t>(ops.size()))
      return describe(ops[at(entry)]);
    entry -= static_cast<std::int32_t>(ops.size());
  }
  return "?";
}

} // namespace

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        out += fmt::format("\\u{:04x}", static_cast<int>(c));
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  return std::isfinite(value) ? fmt::format("{}", value) : "null";
}

std::string report_text(const SimulationReport &report) {
  const Scenario &scenario = report.scenario;
  const Metrics &metrics = report.simulation.metrics;
  const TimeScale &scale = scenario.time_scale;
  std::string out;
  if (!scenario.model_name.empty())
    out += fmt::format("model {}\n", scenario.model_name);
  if (!scenario.stage_layers.empty())
    out += fmt::format("layers per stage {}\n", fmt::join(scenario.stage_layers, " "));
  out += fmt::format("schedule {}  p={} m={} v={}\n", report.schedule.name, scenario.devices,
                     scenario.total_microbatches(), scenario.chunks);
  out += fmt::format("makespan {}  max span {}  ideal {}  bubble {:.2f}%  span bubble {:.2f}%\n",
                     scale.readable(metrics.makespan), scale.readable(metrics.max_span),
                     scale.readable(metrics.ideal), 100 * metrics.bubble_ratio,
                     100 * metrics.span_bubble_ratio);
  if (report.best_lower_bound) {
    out += fmt::format("best lower bound {}  gap {:.2f}%\n",
                       scale.readable(*report.best_lower_bound), 100 * gap(report).value_or(0.0));
  }
  if (metrics.iteration) {
    const IterationEndModel &end = scenario.iteration_end;
    const std::optional<Ticks> bound =
        report.best_lower_bound ? iteration_lower_bound(scenario, *report.best_lower_bound)
                                : std::nullopt;
    out += fmt::format("iteration {}  (end {}, d = {}){}  throughput {} microbatches/s\n",
                       scale.readable(*metrics.iteration),
                       end.mode == IterationEnd::sync ? "sync" : "post-validation",
                       end.data_parallel,
                       bound ? fmt::format("  lower bound {}", scale.readable(*bound)) : "",
                       format_readable(throughput(scenario, *metrics.iteration)));
  }
  // The cap and the violations are in the unit of the memory model that is checked: bytes in
  // bytes, MiB or GiB, count units as numbers.
  const bool byte_cap = scenario.memory_model == MemoryModel::bytes && scenario.bytes;
  const MemoryTrack &capped = checked_track(scenario);
  const auto amount = [&](double value) { return format_checked_amount(scenario, value); };
  const std::optional<double> peak_bytes = metrics.max_peak_bytes();
  out += fmt::format(
      "memory: peak {}{}  feasible {}\n",
      byte_cap && peak_bytes ? format_bytes(*peak_bytes)
                             : format_readable(metrics.max_peak_activations()) + " activations",
      capped.cap ? fmt::format(" ({})", describe_cap(scenario, *capped.cap)) : std::string(),
      metrics.feasible ? "yes" : "no");
  out += fmt::format("{:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12}\n", "device",
                     "start", "end", "span", "busy", "idle", "recompute", "peak act", "peak mem");
  for (std::size_t g = 0; g < metrics.devices.size(); ++g) {
    const DeviceMetrics &d = metrics.devices[g];
    out += fmt::format("{:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12}\n", g,
                       scale.readable(d.start), scale.readable(d.end), scale.readable(d.span),
                       scale.readable(d.busy), scale.readable(d.idle), scale.readable(d.recompute),
                       format_readable(d.peak_activations),
                       d.peak_bytes ? format_bytes(*d.peak_bytes) : "-");
  }
  for (const Violation &violation : metrics.violations) {
    out += fmt::format("over the cap: device {} at {} ({}): {} > {}\n", violation.device,
                       violation_op(report, violation), scale.readable(violation.time),
                       amount(violation.resident), amount(violation.cap));
  }
  for (const std::string &warning : report.warnings)
    out += fmt::format("warning: {}\n", warning);
  return out;
}

std::string report_json(const SimulationReport &report) {
  const Scenario &scenario = report.scenario;
  const Metrics &metrics = report.simulation.metrics;
  const TimeScale &scale = scenario.time_scale;
  const auto time = [&](Ticks t) { return scale.json(t); };
  std::vector<std::string> devices;
  for (const DeviceMetrics &d : metrics.devices) {
    devices.push_back(fmt::format("{{\"busy\": {}, \"idle\": {}, \"span\": {}, \"start\": {}, "
                                  "\"end\": {}, \"recompute_time\": {}, "
                                  "\"peak_activations\": {}, \"peak_bytes\": {}}}",
                                  time(d.busy), time(d.idle), time(d.span), time(d.start),
                                  time(d.end), time(d.recompute), json_number(d.peak_activations),
                                  d.peak_bytes ? json_number(*d.peak_bytes) : "null"));
  }
  std::vector<std::string> violations;
  for (const Violation &v : metrics.violations) {
    violations.push_back(
        fmt::format("{{\"device\": {}, \"op\": {}, \"time\": {}, \"resident\": {}, \"cap\": {}}}",
                    v.device, json_string(violation_op(report, v)), time(v.time),
                    json_number(v.resident), json_number(v.cap)));
  }
  std::vector<std::string> warnings;
  for (const std::string &w : report.warnings)
    warnings.push_back(json_string(w));
  const std::optional<double> relative_gap = gap(report);
  const std::optional<Ticks> iteration_bound =
      report.best_lower_bound ? iteration_lower_bound(scenario, *report.best_lower_bound)
                              : std::nullopt;
  return fmt::format(
      "{{\"schedule\": {}, \"p\": {}, \"m\": {}, \"v\": {}, \"feasible\": {}, \"makespan\": {}, "
      "\"max_span\": {}, \"ideal\": {}, \"bubble_ratio\": {}, \"span_bubble_ratio\": {}, "
      "\"best_lower_bound\": {}, \"gap\": {}, \"iteration\": {}, \"iteration_lower_bound\": {}, "
      "\"throughput\": {}, \"exact_time\": {}, \"devices\": [{}], \"violations\": [{}], "
      "\"warnings\": [{}]}}\n",
      json_string(report.schedule.name), scenario.devices, scenario.total_microbatches(),
      scenario.chunks, metrics.feasible ? "true" : "false", time(metrics.makespan),
      time(metrics.max_span), time(metrics.ideal), json_number(metrics.bubble_ratio),
      json_number(metrics.span_bubble_ratio),
      report.best_lower_bound ? time(*report.best_lower_bound) : "null",
      relative_gap ? json_number(*relative_gap) : "null",
      metrics.iteration ? time(*metrics.iteration) : "null",
      iteration_bound ? time(*iteration_bound) : "null",
      metrics.iteration ? json_number(throughput(scenario, *metrics.iteration)) : "null",
      scale.exact ? "true" : "false",
      fmt::join(devices, ", "), fmt::join(violations, ", "), fmt::join(warnings, ", "));
}

std::vector<std::string> report_csv_columns() {
  return {"schedule",
          "p",
          "m",
          "v",
          "feasible",
          "makespan",
          "max_span",
          "ideal",
          "bubble_ratio",
          "span_bubble_ratio",
          "peak_activations",
          "peak_bytes",
          "best_lower_bound",
          "gap"};
}

std::vector<std::string> report_csv_values(const SimulationReport &report) {
  const Scenario &scenario = report.scenario;
  const Metrics &metrics = report.simulation.metrics;
  const TimeScale &scale = scenario.time_scale;
  const std::optional<double> bytes = metrics.max_peak_bytes();
  const std::optional<double> relative_gap = gap(report);
  return {report.schedule.name,
          fmt::format("{}", scenario.devices),
          fmt::format("{}", scenario.total_microbatches()),
          fmt::format("{}", scenario.chunks),
          metrics.feasible ? "true" : "false",
          scale.format(metrics.makespan),
          scale.format(metrics.max_span),
          scale.format(metrics.ideal),
          fmt::format("{}", metrics.bubble_ratio),
          fmt::format("{}", metrics.span_bubble_ratio),
          fmt::format("{}", metrics.max_peak_activations()),
          bytes ? fmt::format("{}", *bytes) : "",
          report.best_lower_bound ? scale.format(*report.best_lower_bound) : "",
          relative_gap ? fmt::format("{}", *relative_gap) : ""};
}

std::string report_csv_header() { return fmt::format("{}", fmt::join(report_csv_columns(), ",")); }

std::string report_csv_row(const SimulationReport &report) {
  return fmt::format("{}", fmt::join(report_csv_values(report), ","));
}

} // namespace ppsim
