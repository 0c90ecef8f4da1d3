#include "remat/enumerate.h"
#include "base/index.h"

#include "base/error.h"
#include "remat/option_model.h"
#include "sim/engine.h"
#include "sim/memory.h"
#include "sim/metrics.h"
#include "sim/op_locator.h"

#include <fmt/format.h>

#include <algorithm>

namespace ppsim {
namespace {

// Option `index` of one (s,j): forward none, R, or R at one of `levels` checkpoint levels,
// times backward none/activations/full when split.
RematDecision option(int index, int levels, bool split) {
  const int forward = index % (levels + 2);
  RematDecision d;
  if (forward > 0) {
    d.forward = ForwardRemat::full;
    d.level = static_cast<std::uint8_t>(forward - 1);
  }
  if (split)
    d.backward = static_cast<BackwardRemat>(index / (levels + 2));
  return d;
}

// The ILP's objective on the engine's replay (remat/stage_remat_model.h, replayed_objective):
// the iteration where the scenario ends one, else the slowest device's span.
Ticks objective(const Scenario &scenario, const Schedule &schedule) {
  const Engine engine(scenario, schedule);
  const Timing result = engine.run(false);
  Ticks worst;
  std::vector<Ticks> device_end(at(schedule.device_count()));
  for (int g = 0; g < schedule.device_count(); ++g) {
    const std::int32_t first = engine.locator().entry_offset(g);
    const std::int32_t last = engine.locator().entry_offset(g + 1) - 1;
    if (last < first)
      continue;
    worst = std::max(worst, result.end[at(last)] - result.start[at(first)]);
    device_end[at(g)] = result.end[at(last)];
  }
  return iteration_time(scenario, device_end).value_or(worst);
}

} // namespace

std::optional<EnumeratedOptimum> enumerate_best_plan(const Scenario &scenario, const Schedule &base,
                                                     std::int64_t max_plans) {
  const MemoryTrack &track = capped_track(scenario);
  const OpLocator locator(base, scenario.stage_count(), scenario.microbatches);
  const int stages = scenario.stage_count();
  const int m = scenario.microbatches;
  std::vector<int> radix, levels;
  std::vector<bool> split;
  std::int64_t total = 1;
  for (int s = 0; s < stages; ++s) {
    for (int j = 0; j < m; ++j) {
      levels.push_back(checkpoint_levels(scenario, track, s));
      split.push_back(locator.contains(OpKind::backward_weight, s, j));
      radix.push_back((levels.back() + 2) * (split.back() ? 3 : 1));
      total *= radix.back();
      if (total > max_plans) {
        throw Error(fmt::format("too many remat plans to enumerate (more than {})", max_plans));
      }
    }
  }
  std::optional<EnumeratedOptimum> best;
  std::vector<int> digits(radix.size(), 0);
  RematPlan plan(stages, m);
  for (std::int64_t tried = 0; tried < total; ++tried) {
    for (std::size_t k = 0; k < digits.size(); ++k) {
      plan.at(static_cast<int>(k) / m, static_cast<int>(k) % m) =
          option(digits[k], levels[k], split[k]);
    }
    const Schedule schedule = apply_plan(base, plan);
    const std::vector<double> peaks = device_peaks(scenario, schedule, track);
    const bool fits = std::none_of(peaks.begin(), peaks.end(),
                                   [&](double peak) { return over_cap(peak, *track.cap); });
    if (fits) {
      const Ticks value = objective(scenario, schedule);
      if (!best || value < best->objective ||
          (value == best->objective && plan.recompute_count() < best->plan.recompute_count())) {
        best = EnumeratedOptimum{plan, value, 0};
      }
    }
    for (std::size_t k = 0; k < digits.size(); ++k) { // next plan (mixed-radix increment)
      if (++digits[k] < radix[k])
        break;
      digits[k] = 0;
    }
  }
  if (best)
    best->plans_tried = total;
  return best;
}

} // namespace ppsim
