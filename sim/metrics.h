#pragma once
// Makespan, spans, busy and idle time, bubble ratios and memory peaks (docs/model.md, "Metrics").
#include "sim/engine.h"
#include "sim/memory.h"
#include "sim/scenario.h"

#include <memory>
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
  /// The iteration with its end (iteration_time); none when the scenario's end is none.
  std::optional<Ticks> iteration;

  /// The largest device peak in the count (or zb) unit.
  [[nodiscard]] double max_peak_activations() const;
  /// The largest device peak in bytes; none when the scenario has no byte sizes.
  [[nodiscard]] std::optional<double> max_peak_bytes() const;
};

/// Per device, what follows its last op until the iteration ends (docs/model.md, "The
/// iteration's end"): its all-reduce, then its own optimizer step (`post_validation`) or the
/// slowest device's (`sync`: every device waits for the global gradient norm before its step).
/// Empty when the scenario's end is none.
std::vector<Ticks> iteration_tails(const Scenario &scenario);

/// The iteration's time (docs/model.md, "The iteration's end") from each device's last end:
/// `sync`, max_g (end_g + all-reduce_g) + max_g optimizer_g (every device waits for the global
/// gradient norm before its step); `post_validation`, max_g (end_g + all-reduce_g +
/// optimizer_g). None when the scenario's end is none.
std::optional<Ticks> iteration_time(const Scenario &scenario, const std::vector<Ticks> &device_end);

/// A lower bound on iteration_time from a lower bound on the makespan (max_g end_g): `sync`,
/// bound + min_g all-reduce_g + max_g optimizer_g; `post_validation`, bound + min_g
/// (all-reduce_g + optimizer_g). None when the scenario's end is none.
std::optional<Ticks> iteration_lower_bound(const Scenario &scenario, Ticks makespan_bound);

/// Microbatches per second over every data-parallel replica: d m / iteration, the iteration in
/// seconds (Scenario::units_per_second).
double throughput(const Scenario &scenario, Ticks iteration);

/// Everything one simulation produced: timing, memory per track, and the metrics over them.
struct Simulation {
  Timing timing;
  MemoryReport activations;
  std::optional<MemoryReport> bytes;
  Metrics metrics;
};

struct SimulateOptions {
  /// Record memory over time and list the transfers (Timing::transfers), for --svg, --trace and
  /// reports; without, a run keeps only what its metrics need.
  bool timelines = false;
};

/// Validates, times and measures a schedule: the one entry point the CLI and sweeps use.
Simulation simulate(const Scenario &scenario, const Schedule &schedule,
                    const SimulateOptions &options = {});

/// simulate for a schedule that already passed validate_schedule, with the index it returned.
Simulation simulate_validated(const Scenario &scenario, const Schedule &schedule,
                              std::shared_ptr<const OpLocator> locator,
                              const SimulateOptions &options = {});

/// Per device, the mean idle gap right before its backward ops (B or BW): the wait for the
/// gradient from downstream, a window where Lynx hides recomputation (docs/lynx.md, "The model",
/// windows "taken from a first simulation"), in the scenario's time unit. Zero on a device without
/// backward ops.
std::vector<double> mean_wait_before_backward(const Scenario &scenario, const Schedule &schedule,
                                              const Timing &result);

} // namespace ppsim
