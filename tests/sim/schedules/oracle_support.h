#pragma once
// Readers shared by the schedule oracle tests: per-device metrics in user units and peaks in
// chunk-activation units (docs/oracles.md: chunk units = K-unit peak x v).
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ppsim::testing {

/// Each device's list as "F(s,j) BW(s,j) ..." strings.
inline std::vector<std::string> orders(const Schedule &schedule) {
  std::vector<std::string> rows;
  for (const auto &ops : schedule.device_ops) {
    std::string row;
    for (const Op &op : ops)
      row += (row.empty() ? "" : " ") + describe(op);
    rows.push_back(row);
  }
  return rows;
}

/// One per-device metric (start, end, span, busy, idle) of a run, in user time units.
inline std::vector<double> per_device(const Run &run, Ticks DeviceMetrics::*member) {
  std::vector<double> values;
  for (const DeviceMetrics &device : run.simulation.metrics.devices) {
    values.push_back(run.units(device.*member));
  }
  return values;
}

/// Peak activations per device in chunk units (count 1 per chunk activation), rounded to the
/// nearest 1e-9 so sums of 1/v fractions compare exactly.
inline std::vector<double> chunk_peaks(const Run &run) {
  std::vector<double> values;
  const double chunks_per_device = run.scenario.stage_count() / run.scenario.devices;
  for (const DeviceMetrics &device : run.simulation.metrics.devices) {
    values.push_back(std::round(device.peak_activations * chunks_per_device * 1e9) / 1e9);
  }
  return values;
}

/// max over devices of (makespan - busy), the DualPipe README's per-device bubble.
inline Ticks max_makespan_minus_busy(const Run &run) {
  Ticks worst{0};
  for (const DeviceMetrics &device : run.simulation.metrics.devices) {
    worst = std::max(worst, run.simulation.metrics.makespan - device.busy);
  }
  return worst;
}

/// max over devices of (span - busy).
inline Ticks max_idle(const Run &run) {
  Ticks worst{0};
  for (const DeviceMetrics &device : run.simulation.metrics.devices)
    worst = std::max(worst, device.idle);
  return worst;
}

/// The costs a closed form takes (docs/schedules.md): per-chunk F, B, W, R = F, latency c, for
/// p devices, m microbatches and v chunks per device.
inline UniformCosts uniform_costs(std::int64_t p, std::int64_t m, std::int64_t v, Ticks f, Ticks b,
                                  Ticks w, Ticks c) {
  return UniformCosts{f, b, w, f, c, p, m, v, 0, RematTiming::early};
}

/// Checks that `closed_form` gives the makespan the engine simulates for schedule `name` at p
/// devices, m microbatches, one chunk each, per-stage F, B, W and latency c.
inline void check_closed_form(const std::string &name, ClosedForm closed_form, int p, int m,
                              Rational f, Rational b, Rational w, Rational c = {0, 1}) {
  CAPTURE(name);
  CAPTURE(p);
  CAPTURE(m);
  const Run run = run_schedule(name, uniform_input(p, m, f, b, w, c));
  const auto form = closed_form(
      uniform_costs(p, m, 1, ticks(run, f), ticks(run, b), ticks(run, w), ticks(run, c)));
  REQUIRE(form.has_value());
  CHECK(*form == run.simulation.metrics.makespan);
}

} // namespace ppsim::testing
