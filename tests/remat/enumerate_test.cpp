// Exhaustive plan search (the ILP's reference on tiny instances).
#include "remat/enumerate.h"

#include "base/error.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

using namespace ppsim;
using ppsim::testing::uniform_input;

namespace {

std::optional<EnumeratedOptimum> best(const std::string &name, int m, double k,
                                      std::int64_t max_plans = 2'000'000) {
  ScenarioInput input = uniform_input(2, m, {1, 1}, {1, 1}, {0, 1});
  input.cap_activations = k;
  const ScheduleInfo &info = find_schedule(name);
  const Scenario scenario = build_scenario(input, info);
  return enumerate_best_plan(scenario, generate_schedule(info, scenario, {}), max_plans);
}

} // namespace

TEST_CASE("enumeration finds the all-remat optimum of 1F1B at K = 1") {
  // p = 2, m = 4, F = B = 1: 2^8 plans. With K = 1 device 0 may store one activation at a
  // time, so every microbatch but one is recomputed (F(0,0) can store because F(0,1) does not);
  // with early timing the span is that of the all-remat schedule (makespan 12, docs/oracles.md,
  // "Bounds at small caps").
  const auto found = best("1f1b", 4, 1);
  REQUIRE(found);
  CHECK(found->plans_tried == 256);
  CHECK(found->plan.forward_count() == 3);
  CHECK(found->objective.count() == 12);
  // Unlimited memory: nothing recomputed (the tie rule prefers fewer ops), span (m+p-1)(F+B).
  const auto free = best("1f1b", 4, 10);
  REQUIRE(free);
  CHECK(free->plan.recompute_count() == 0);
  CHECK(free->objective.count() == 10);
}

TEST_CASE("enumeration reports no plan and refuses huge instances") {
  CHECK_FALSE(best("1f1b", 2, 0.5));
  CHECK_THROWS_WITH_AS(best("1f1b", 4, 1, 100), "too many remat plans to enumerate (more than 100)",
                       Error);
}
