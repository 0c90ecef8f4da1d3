#pragma once
// Makespan, spans, busy and idle time, bubble ratios and memory peaks (docs/model.md, "Metrics").
#include "sim/engine.h"
#include "sim/memory.h"
#include "sim/scenario.h"

#include <optional>
#include <vector>

namespace ppsim {

struct DeviceMetrics {
  Ticks start;                      ///< first op start
  Ticks end;                        ///< last op end
  Ticks span;                       ///< end - start
  Ticks busy;                       ///< sum of op durations, recomputation included
  Ticks idle;                       ///< span - busy
  Ticks recompute;                  ///< time in R, RW and RBW ops
  double peak_activations = 0;      ///< count (or zb) unit of docs/model.md, "Memory models"
  std::optional<double> peak_bytes; ///< byte model, when byte sizes are known
};

struct Metrics {
  Ticks makespan;
  Ticks max_span;
  Ticks ideal;                  ///< max over devices of busy time without recomputation
  double bubble_ratio = 0;      ///< (makespan - ideal) / makespan
  double span_bubble_ratio = 0; ///< (max_span - ideal) / max_span
  std::vector<DeviceMetrics> devices;
  bool feasible = true; ///< no device exceeds the cap of the active memory model
  std::vector<Violation> violations;

  /// The largest device peak in the count (or zb) unit.
  [[nodiscard]] double max_peak_activations() const;
  /// The largest device peak in bytes; none when the scenario has no byte sizes.
  [[nodiscard]] std::optional<double> max_peak_bytes() const;
};

/// Everything one simulation produced: timing, memory per track, and the metrics over them.
struct Simulation {
  Timing timing;
  MemoryReport activations;
  std::optional<MemoryReport> bytes;
  Metrics metrics;
};

struct SimulateOptions {
  bool memory_timelines = false; ///< record memory over time (for --svg, --trace)
};

/// Validates, times and measures a schedule: the one entry point the CLI and sweeps use.
Simulation simulate(const Scenario &scenario, const Schedule &schedule,
                    const SimulateOptions &options = {});

/// Per device, the mean idle gap right before its backward ops (B or BW): the wait for the
/// gradient from downstream, a window where Lynx hides recomputation (docs/lynx.md, "The model",
/// windows "taken from a first simulation"), in the scenario's time unit. Zero on a device without
/// backward ops.
std::vector<double> mean_wait_before_backward(const Scenario &scenario, const Schedule &schedule,
                                              const Timing &result);

} // namespace ppsim
