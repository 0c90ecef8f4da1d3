// Auto mode (docs/remat.md, "--auto"): every candidate solved and ranked by replayed span.
#include "run/auto_mode.h"

#include "tests/sim/test_support.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace ppsim;
using ppsim::testing::uniform_input;

TEST_CASE("auto mode ranks schedules by replayed span and the winner changes with the budget") {
  ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.costs_per_device = true; // V shapes split the work over 2 chunks, on their own tick scale
  const std::vector<std::string> candidates{"1f1b",  "1f1b-split", "zb-h1",
                                            "zb-h2", "zb-v",       "v-half"};
  const auto winner_at = [&](double k) {
    input.cap_activations = k;
    const std::vector<AutoCandidate> ranked = rank_schedules(input, candidates, {60, 0}, 2);
    REQUIRE(ranked.size() == candidates.size());
    for (std::size_t r = 1; r < ranked.size(); ++r) {
      if (!ranked[r].solved())
        continue;
      REQUIRE(ranked[r - 1].solved());
      // In time units: candidates with chunks have their own tick scale.
      const auto units = [](const AutoCandidate &c) {
        return c.scenario.time_scale.to_units(c.solution->simulation.metrics.max_span);
      };
      CHECK(units(ranked[r - 1]) <= units(ranked[r]));
    }
    for (const AutoCandidate &c : ranked) {
      if (c.solved())
        CHECK(c.peak <= k + 1e-9);
    }
    return ranked.front();
  };
  // Plenty of memory: ZB-H2 has no bubble (span = m(F+B+W) = 24).
  const AutoCandidate roomy = winner_at(8);
  CHECK(roomy.schedule == "zb-h2");
  CHECK(roomy.solution->simulation.metrics.max_span.count() == 24);
  CHECK(roomy.solution->plan.recompute_count() == 0);
  // Tight memory: every schedule recomputes; the winner and its span change.
  const AutoCandidate tight = winner_at(2);
  CHECK(tight.solution->simulation.metrics.max_span.count() > 24);
}

TEST_CASE("auto mode reports incompatible and infeasible candidates") {
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 0.25;
  const std::vector<AutoCandidate> ranked = rank_schedules(input, {"1f1b", "zb-h1"}, {60, 0});
  for (const AutoCandidate &c : ranked) {
    CHECK_FALSE(c.solved());
    CHECK(c.status == "infeasible");
    CHECK(c.note.starts_with("cannot fit schedule '" + c.schedule + "' within cap 0.25"));
  }
  CHECK(default_auto_candidates().front() == "gpipe");
}

TEST_CASE("auto mode reports each candidate solved, with its status") {
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 0.25;
  std::vector<std::string> reports;
  const auto progress = [&](std::size_t done, std::size_t total, std::string_view step) {
    reports.push_back(fmt::format("{}/{} {}", done, total, step));
  };
  rank_schedules(input, {"1f1b", "zb-h1"}, {60, 0}, 1, progress);
  CHECK(reports ==
        std::vector<std::string>{"0/2 ", "1/2 1f1b: infeasible", "2/2 zb-h1: infeasible"});
}

TEST_CASE("a schedule that already recomputes is replayed as generated") {
  ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 1;
  std::vector<AutoCandidate> ranked = rank_schedules(input, {"full-remat"}, {60, 0});
  REQUIRE(ranked.front().solved());
  CHECK(ranked.front().status == "as generated");
  CHECK(ranked.front().peak == 1);
  CHECK(ranked.front().solution->plan.forward_count() > 0);
  input.cap_activations = 0.5;
  ranked = rank_schedules(input, {"full-remat"}, {60, 0});
  CHECK(ranked.front().status == "infeasible");
  CHECK(ranked.front().note == "schedule 'full-remat' peaks at 1 over cap 0.5");
}
