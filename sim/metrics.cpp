#include "sim/metrics.h"
#include "base/index.h"

#include "sim/validate.h"

#include <algorithm>

namespace ppsim {
namespace {

double ratio(Ticks numerator, Ticks denominator) {
  return denominator.count() == 0
             ? 0.0
             : static_cast<double>(numerator.count()) / static_cast<double>(denominator.count());
}

Metrics measure(const Scenario &scenario, const Schedule &schedule, const OpLocator &locator,
                const Timing &result, const MemoryReport &activations,
                const std::optional<MemoryReport> &bytes) {
  Metrics metrics;
  metrics.devices.resize(schedule.device_ops.size());
  for (int g = 0; g < schedule.device_count(); ++g) {
    const auto device = at(g);
    const auto &ops = schedule.device_ops[device];
    DeviceMetrics &stats = metrics.devices[device];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto entry = at(locator.entry_offset(g)) + i;
      const Ticks duration = result.end[entry] - result.start[entry];
      stats.busy += duration;
      if (is_recompute(ops[i].kind()))
        stats.recompute += duration;
    }
    if (!ops.empty()) {
      stats.start = result.start[at(locator.entry_offset(g))];
      stats.end = result.end[at(locator.entry_offset(g + 1)) - 1];
    }
    stats.span = stats.end - stats.start;
    stats.idle = stats.span - stats.busy;
    stats.peak_activations = activations.devices[device].peak;
    if (bytes)
      stats.peak_bytes = bytes->devices[device].peak;
    metrics.makespan = std::max(metrics.makespan, stats.end);
    metrics.max_span = std::max(metrics.max_span, stats.span);
    metrics.ideal = std::max(metrics.ideal, stats.busy - stats.recompute);
  }
  metrics.bubble_ratio = ratio(metrics.makespan - metrics.ideal, metrics.makespan);
  metrics.span_bubble_ratio = ratio(metrics.max_span - metrics.ideal, metrics.max_span);
  const MemoryReport &capped =
      scenario.memory_model == MemoryModel::bytes && bytes ? *bytes : activations;
  metrics.violations = capped.violations;
  metrics.feasible = metrics.violations.empty();
  std::vector<Ticks> device_end;
  for (const DeviceMetrics &device : metrics.devices)
    device_end.push_back(device.end);
  metrics.iteration = iteration_time(scenario, device_end);
  return metrics;
}

} // namespace

std::vector<Ticks> iteration_tails(const Scenario &scenario) {
  const IterationEndModel &end = scenario.iteration_end;
  if (end.mode == IterationEnd::none)
    return {};
  const Ticks slowest_step = *std::max_element(end.optimizer.begin(), end.optimizer.end());
  std::vector<Ticks> tails;
  for (std::size_t g = 0; g < end.all_reduce.size(); ++g)
    tails.push_back(end.all_reduce[g] +
                    (end.mode == IterationEnd::sync ? slowest_step : end.optimizer[g]));
  return tails;
}

std::optional<Ticks> iteration_time(const Scenario &scenario,
                                    const std::vector<Ticks> &device_end) {
  const std::vector<Ticks> tails = iteration_tails(scenario);
  if (tails.empty())
    return std::nullopt;
  Ticks iteration{0};
  for (std::size_t g = 0; g < device_end.size(); ++g)
    iteration = std::max(iteration, device_end[g] + tails[g]);
  return iteration;
}

std::optional<Ticks> iteration_lower_bound(const Scenario &scenario, Ticks makespan_bound) {
  // The device whose end is the makespan still reduces (and steps) after it.
  const std::vector<Ticks> tails = iteration_tails(scenario);
  if (tails.empty())
    return std::nullopt;
  return makespan_bound + *std::min_element(tails.begin(), tails.end());
}

double throughput(const Scenario &scenario, Ticks iteration) {
  const double seconds = scenario.time_scale.to_units(iteration) / scenario.units_per_second;
  return seconds > 0 ? static_cast<double>(scenario.iteration_end.data_parallel) *
                           scenario.total_microbatches() / seconds
                     : 0.0;
}

Simulation simulate(const Scenario &scenario, const Schedule &schedule,
                    const SimulateOptions &options) {
  return simulate_validated(
      scenario, schedule, std::make_shared<const OpLocator>(validate_schedule(scenario, schedule)),
      options);
}

Simulation simulate_validated(const Scenario &scenario, const Schedule &schedule,
                              std::shared_ptr<const OpLocator> locator,
                              const SimulateOptions &options) {
  const Engine engine(scenario, schedule, std::move(locator));
  Simulation simulation;
  simulation.timing = engine.run(options.timelines);
  simulation.activations = track_memory(schedule, engine.locator(), simulation.timing,
                                        scenario.activations, options.timelines);
  if (scenario.bytes) {
    simulation.bytes = track_memory(schedule, engine.locator(), simulation.timing, *scenario.bytes,
                                    options.timelines);
  }
  simulation.metrics = measure(scenario, schedule, engine.locator(), simulation.timing,
                               simulation.activations, simulation.bytes);
  return simulation;
}

std::vector<double> mean_wait_before_backward(const Scenario &scenario, const Schedule &schedule,
                                              const Timing &result) {
  std::vector<double> waits;
  std::size_t entry = 0; // entries are numbered device by device (OpLocator)
  for (const std::vector<Op> &ops : schedule.device_ops) {
    Ticks total{0};
    std::int64_t backwards = 0;
    for (std::size_t i = 0; i < ops.size(); ++i, ++entry) {
      const OpKind kind = ops[i].kind();
      if (kind != OpKind::backward_input && kind != OpKind::backward_full)
        continue;
      const Ticks previous_end = i == 0 ? Ticks{0} : result.end[entry - 1];
      total = total + (result.start[entry] - previous_end);
      ++backwards;
    }
    waits.push_back(backwards == 0
                        ? 0.0
                        : scenario.time_scale.to_units(total) / static_cast<double>(backwards));
  }
  return waits;
}

double Metrics::max_peak_activations() const {
  double peak = 0;
  for (const DeviceMetrics &device : devices)
    peak = std::max(peak, device.peak_activations);
  return peak;
}

std::optional<double> Metrics::max_peak_bytes() const {
  std::optional<double> peak;
  for (const DeviceMetrics &device : devices) {
    if (device.peak_bytes)
      peak = std::max(peak.value_or(0.0), *device.peak_bytes);
  }
  return peak;
}

} // namespace ppsim
