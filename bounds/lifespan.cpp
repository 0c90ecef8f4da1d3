// Lifespan predictor (docs/bounds.md, "Lifespan memory predictor"): measure one microbatch in the
// middle of the run.
#include "bounds/lifespan.h"
#include "base/index.h"

#include "base/error.h"
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

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

/// Number of integers k with start + kT <= t < end + kT and first <= k <= last: copies of the
/// residency, shifted by whole periods, that cover tick t, counting only the microbatches that
/// exist (the reference shifted by k is microbatch reference + k).
std::int64_t copies_at(const Residency &part, std::int64_t t, std::int64_t period,
                       std::int64_t first, std::int64_t last) {
  const std::int64_t low = std::max(first, floor_div(t - part.end, period) + 1);
  const std::int64_t high = std::min(last, floor_div(t - part.start, period));
  return std::max<std::int64_t>(0, high - low + 1);
}

/// The period of the stable phase: the median gap between the starts of consecutive forwards of
/// stage 0 (a single gap measured in the middle would fall on the end of the warm-up when m is
/// small, and a mean would count it).
Ticks stable_period(const OpLocator &locator, const Timing &timing, int microbatches) {
  std::vector<Ticks> gaps;
  for (int j = 0; j + 1 < microbatches; ++j) {
    const std::int32_t first = locator.find(OpRef{OpKind::forward, 0, j});
    const std::int32_t next = locator.find(OpRef{OpKind::forward, 0, j + 1});
    if (first == OpLocator::kAbsent || next == OpLocator::kAbsent)
      throw Error("the lifespan predictor needs the forwards of stage 0");
    gaps.push_back(timing.start[at(next)] - timing.start[at(first)]);
  }
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                   gaps.end());
  return gaps[gaps.size() / 2];
}

} // namespace

MemoryPrediction predict_peak_activations(const Scenario &scenario, const Schedule &schedule,
                                          const Timing &timing) {
  const int m = scenario.microbatches;
  if (m < 2)
    throw Error("the lifespan predictor needs at least 2 microbatches to measure a period");
  const OpLocator locator(schedule, scenario.stage_count(), m);
  const auto entry = [&](OpKind kind, int stage, int microbatch) {
    return locator.find(OpRef{kind, stage, microbatch});
  };
  MemoryPrediction prediction;
  prediction.reference_microbatch = m / 2;
  prediction.period = stable_period(locator, timing, m);
  if (prediction.period <= Ticks{0})
    throw Error(fmt::format("schedule '{}' is not periodic: stage 0 starts its forwards no later "
                            "than the previous ones",
                            schedule.name));
  const std::int64_t period = prediction.period.count();
  std::vector<std::vector<Residency>> parts(at(scenario.devices));
  const int reference = prediction.reference_microbatch;
  for (int s = 0; s < scenario.stage_count(); ++s) {
    const StageMemory &memory = scenario.activations.stages[at(s)];
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
    const std::int64_t start = timing.start[at(allocating)].count();
    std::vector<Residency> &device = parts[at(scenario.stage_device[at(s)])];
    device.push_back({start, timing.end[at(unstash)].count(), memory.stored - memory.kept_after_b});
    device.push_back({start, timing.end[at(stash)].count(), memory.kept_after_b});
  }
  // Copies k of the reference microbatch r exist for r + k in [0, m).
  const std::int64_t first_copy = -reference;
  const std::int64_t last_copy = m - 1 - reference;
  for (const std::vector<Residency> &device : parts) {
    double bound = 0, peak = 0;
    for (const Residency &part : device) {
      if (part.end > part.start)
        bound += part.size * static_cast<double>(std::min<std::int64_t>(
                                 (part.end - part.start + period - 1) / period, m));
      // The periodic count only rises where some existing copy starts: its maximum is at one.
      for (std::int64_t k = first_copy; k <= last_copy; ++k) {
        const std::int64_t t = part.start + k * period;
        double resident = 0;
        for (const Residency &other : device)
          resident +=
              other.size * static_cast<double>(copies_at(other, t, period, first_copy, last_copy));
        peak = std::max(peak, resident);
      }
    }
    prediction.lifespan_bound.push_back(bound);
    prediction.predicted_peak.push_back(peak);
  }
  return prediction;
}

} // namespace ppsim
