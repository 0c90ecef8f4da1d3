#pragma once
// Exhaustive search over remat plans for tiny instances: the reference the ILP is tested
// against (docs/remat.md, "The ILP (ppsim form)", acceptance tests). Every (s,j) takes each of its
// options (no R, R, or R at each checkpoint level of the stage; times none, RW or RBW for a split
// backward), each plan is replayed by the engine, and the smallest max span under the cap wins.
#include "remat/plan.h"
#include "sim/scenario.h"

#include <cstdint>
#include <optional>

namespace ppsim {

struct EnumeratedOptimum {
  RematPlan plan;
  /// The ILP's objective on the replay: the slowest device's span, or the iteration where the
  /// scenario ends one.
  Ticks objective;
  std::int64_t plans_tried = 0;
};

/// The best plan (least objective) under capped_track(scenario)'s cap (ties: fewer recomputed
/// ops, then the first in enumeration order), or nothing when no plan fits. Throws Error past `max_plans`
/// candidate plans, so a test cannot hang on an instance that is too large.
std::optional<EnumeratedOptimum> enumerate_best_plan(const Scenario &scenario, const Schedule &base,
                                                     std::int64_t max_plans = 2'000'000);

} // namespace ppsim
