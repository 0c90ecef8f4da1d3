// The recomputation ILP on real numbers (non-round times, fractional and byte budgets, every
// schedule): instances that once aborted inside Clp, were refused by a wrong pre-check or ran
// past their limit. Each must return a plan whose replay fits the budget and equals the
// reported objective, and a time limit must return the best plan so far with its bound.
#include "remat/baselines.h"
#include "remat/stage_remat_ilp.h"

#include "base/decimal.h"
#include "base/error.h"
#include "run/prepare.h"
#include "run/scenario_file.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <string>

using namespace ppsim;

namespace {

Rational exact(const char *text) { return *parse_rational(text); }

// The profiled-looking per-stage costs of the issue (ms), p devices, m microbatches, a count cap.
testing::Generated profiled(const std::string &schedule, int p, int m, double cap) {
  RunInput input =
      testing::uniform_input(p, m, exact("13.960596"), exact("16.18318"), exact("11.738016"));
  input.cap_activations = cap;
  return testing::generate(schedule, input);
}

// The replay of a found plan: fits the budget, and (pinned ppsim form) its slowest device span
// is the objective; the bound is below it.
void check_plan(const Scenario &scenario, const RematSolution &solution) {
  REQUIRE(solution.found());
  CHECK(solution.simulation.metrics.feasible);
  const auto span = static_cast<double>(solution.simulation.metrics.max_span.count());
  if (solution.first_ops_pinned)
    CHECK(span == doctest::Approx(solution.objective).epsilon(1e-7));
  CHECK(solution.best_bound <= span * (1 + 1e-7));
  const MemoryTrack &track = capped_track(scenario);
  for (const double peak : device_peaks(scenario, solution.schedule, track))
    CHECK_FALSE(over_cap(peak, *track.cap));
}

} // namespace

TEST_CASE(
    "issue_13 profiled-looking times: once a Clp assertion, now a plan (1F1B p = 8, m = 64)") {
  const testing::Generated g = profiled("1f1b", 8, 64, 6.5);
  const RematSolution solution = solve_stage_remat(g.scenario, g.schedule, IlpOptions{20, 0.03});
  check_plan(g.scenario, solution);
  // Recomputing every stash would fit too; the optimum recomputes only what 6.5 needs.
  CHECK(solution.plan.forward_count() < 448);
}

TEST_CASE("issue_13 every schedule the ILP can express, non-round costs and a fractional cap") {
  int solved = 0;
  for (const ScheduleInfo &info : schedule_registry()) {
    CAPTURE(info.name);
    RunInput input = testing::uniform_input(4, 8, exact("1.731"), exact("2.0417"),
                                                 exact("0.9893"), exact("0.0625"));
    input.cap_activations = 2.75;
    testing::Generated g;
    try {
      g = testing::generate(info.name, input);
    } catch (const Error &) {
      continue; // the generator refuses this p, m or cap (its own tests cover why)
    }
    RematSolution solution;
    try {
      solution = solve_stage_remat(g.scenario, g.schedule, IlpOptions{20, 0});
    } catch (const Error &error) {
      // Only what the formulation cannot express, or a cap no plan meets, may be refused.
      const std::string message = error.what();
      CHECK((message.find("overlapped") != std::string::npos ||
             message.find("already contains") != std::string::npos ||
             message.find("the least peak any remat plan reaches") != std::string::npos));
      continue;
    }
    check_plan(g.scenario, solution);
    CHECK(solution.status == solver::Status::optimal);
    ++solved;
  }
  CHECK(solved >= 10);
}

TEST_CASE("issue_13 a zoo model under a byte budget in GiB") {
  RunInput input = read_scenario_file(PPSIM_SOURCE_DIR "/scenarios/models/llama2-7b.toml");
  input.microbatches = 16;
  input.budget_bytes = 26 * kBytesPerGiB;
  for (const char *schedule : {"1f1b", "zb-h1"}) {
    CAPTURE(schedule);
    input.schedule = schedule;
    const PreparedRun run = prepare_run(input);
    const RematSolution solution =
        solve_stage_remat(run.scenario, run.schedule, IlpOptions{20, 0.01});
    check_plan(run.scenario, solution);
    CHECK(solution.plan.recompute_count() > 0);
  }
}

TEST_CASE("issue_13 a time limit returns the best plan so far with its proven bound") {
  // Far too little time for the solver (0.05 s), or none (0: the limit ends at the first check
  // inside the model builder): the greedy start, computed before the model, comes back with the
  // base schedule's own span as the bound.
  const testing::Generated g = profiled("zb-h1", 8, 128, 5.25);
  for (const double limit : {0.05, 0.0}) {
    CAPTURE(limit);
    const RematSolution solution = solve_stage_remat(g.scenario, g.schedule, IlpOptions{limit, 0});
    check_plan(g.scenario, solution);
    CHECK(solution.from_start);
    CHECK(solution.status == solver::Status::feasible);
    CHECK(solution.plan == *greedy_plan(g.scenario, g.schedule));
    CHECK(solution.best_bound ==
          static_cast<double>(simulate(g.scenario, g.schedule).metrics.max_span.count()));
  }
}
