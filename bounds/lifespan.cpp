// Lifespan predictor (spec bounds.md 6): measure one microbatch in the middle of the run.
#include "bounds/lifespan.h"

#include "sim/error.h"
#include "sim/op_locator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ppsim {
namespace {

/// One share of an activation of the reference microbatch, resident over [start, end).
struct Residency {
  std::int64_t start, end;
  double size;
};

/// Number of integers k with start + kT <= t < end + kT: copies of the residency, shifted by
/// whole periods, that cover tick t.
std::int64_t copies_at(const Residency &part, std::int64_t t, std::int64_t period) {
  const auto floor_div = [](std::int64_t a, std::int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
  };
  return floor_div(t - part.start, period) - floor_div(t - part.end, period);
}

} // namespace

MemoryPrediction predict_peak_activations(const Scenario &scenario, const Schedule &schedule,
                                          const Result &timing) {
  const int m = scenario.microbatches;
  if (m < 2)
    throw Error("the lifespan predictor needs at least 2 microbatches to measure a period");
  const OpLocator locator(schedule, scenario.stage_count(), m);
  const auto entry = [&](OpKind kind, int stage, int microbatch) {
    return locator.find(OpRef{kind, stage, microbatch});
  };
  MemoryPrediction prediction;
  prediction.reference_microbatch = m / 2;
  const int j = (m - 1) / 2; // j and j + 1 = m/2 both exist; the lifespans use j + 1 = m/2
  const std::int32_t first = entry(OpKind::forward, 0, j);
  const std::int32_t next = entry(OpKind::forward, 0, j + 1);
  if (first == OpLocator::kAbsent || next == OpLocator::kAbsent)
    throw Error("the lifespan predictor needs the forwards of stage 0");
  prediction.period =
      timing.start[static_cast<std::size_t>(next)] - timing.start[static_cast<std::size_t>(first)];
  if (prediction.period <= Ticks{0})
    throw Error(fmt::format("schedule '{}' is not periodic: stage 0 starts microbatch {} no "
                            "later than microbatch {}",
                            schedule.name, j + 1, j));
  const std::int64_t period = prediction.period.count();
  std::vector<std::vector<Residency>> parts(static_cast<std::size_t>(scenario.devices));
  const int reference = prediction.reference_microbatch;
  for (int s = 0; s < scenario.stage_count(); ++s) {
    const StageMemory &memory = scenario.activations.stages[static_cast<std::size_t>(s)];
    std::int32_t allocating = entry(OpKind::recompute_forward, s, reference);
    if (allocating == OpLocator::kAbsent)
      allocating = entry(OpKind::forward, s, reference);
    std::int32_t unstash = entry(OpKind::backward_full, s, reference);
    std::int32_t stash = unstash;
    if (unstash == OpLocator::kAbsent) {
      unstash = entry(OpKind::backward_input, s, reference);
      stash = entry(OpKind::backward_weight, s, reference);
    }
    if (allocating == OpLocator::kAbsent || unstash == OpLocator::kAbsent ||
        stash == OpLocator::kAbsent)
      throw Error(fmt::format("the lifespan predictor cannot find the ops of stage {} for "
                              "microbatch {}",
                              s, reference));
    // Sub-ops of an overlapped op (OV) share its start and end.
    const std::int64_t start = timing.start[static_cast<std::size_t>(allocating)].count();
    std::vector<Residency> &device =
        parts[static_cast<std::size_t>(scenario.stage_device[static_cast<std::size_t>(s)])];
    device.push_back({start, timing.end[static_cast<std::size_t>(unstash)].count(),
                      memory.stored - memory.kept_after_b});
    device.push_back(
        {start, timing.end[static_cast<std::size_t>(stash)].count(), memory.kept_after_b});
  }
  for (const std::vector<Residency> &device : parts) {
    double bound = 0, peak = 0;
    for (const Residency &part : device) {
      if (part.end > part.start)
        bound += part.size * static_cast<double>((part.end - part.start + period - 1) / period);
      // The periodic count only rises where some copy starts, so its maximum is at a start.
      double resident = 0;
      for (const Residency &other : device)
        resident += other.size * static_cast<double>(copies_at(other, part.start, period));
      peak = std::max(peak, resident);
    }
    prediction.lifespan_bound.push_back(bound);
    prediction.predicted_peak.push_back(peak);
  }
  return prediction;
}

} // namespace ppsim
