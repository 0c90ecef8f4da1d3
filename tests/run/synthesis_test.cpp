// Schedule synthesis (docs/synthesis.md): the result is a valid schedule within the cap whose
// makespan is the engine's replay, never slower than any registered schedule of the placement and
// backward form that fits the cap, never below the bound, equal to the exact optimum on tiny
// instances, and reproducible.
#include "base/error.h"
#include "bounds/analyzer.h"
#include "bounds/exact.h"
#include "bounds/incumbent.h"
#include "remat/baselines.h"
#include "remat/plan.h"
#include "run/compare.h"
#include "run/policy.h"
#include "run/prepare.h"
#include "run/scenario_file.h"
#include "run/synthesis.h"
#include "sim/schedules/registry.h"
#include "sim/memory.h"
#include "sim/placement.h"
#include "tests/bounds/brute_force.h"
#include "tests/bounds/registered_support.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <fmt/format.h>
#include <random>
#include <string>

using ppsim::BackwardForm;
using ppsim::Ticks;
using ppsim::testing::check_not_slower_than_registered;
using ppsim::testing::uniform_input;

namespace {

/// The local search alone, stopped by its evaluation limit (so reproducible).
ppsim::SynthesisOptions quick(std::int64_t evaluations = 300) {
  ppsim::SynthesisOptions options;
  options.max_evaluations = evaluations;
  options.time_limit_seconds = 60;
  options.exact_max_start_variables = 0;
  return options;
}

/// The local search, then the exact optimum.
ppsim::SynthesisOptions with_exact() {
  ppsim::SynthesisOptions options = quick();
  options.exact_max_start_variables = ppsim::ExactOptions{}.max_start_variables;
  return options;
}

/// The result replays to its makespan within the cap, and the bound is below it.
void check_result(const ppsim::Scenario &scenario, const ppsim::SynthesisResult &result) {
  const ppsim::Simulation replay = ppsim::simulate(scenario, result.schedule);
  CHECK(replay.metrics.feasible);
  CHECK(replay.metrics.makespan == result.makespan);
  CHECK(result.lower_bound <= result.makespan);
  CHECK(result.makespan <= result.seed_makespan);
  CHECK(result.makespan <= result.best_known_makespan);
  CHECK(result.best_known_makespan <= result.seed_makespan);
  CHECK(result.schedule.name == "synthesized");
  // Recomputation right before the op it rebuilds for (docs/synthesis.md, "Recomputation"): the
  // orders and the plan written apart give the schedule back.
  const ppsim::RematPlan plan =
      ppsim::plan_of(result.schedule, scenario.stage_count(), scenario.microbatches);
  CHECK(ppsim::apply_plan(ppsim::without_recomputation(result.schedule), plan).device_ops ==
        result.schedule.device_ops);
}

/// How a synthesis fared against `compare`'s runs of the same placement and backward form that
/// fit: each checked not to be faster, and counted.
struct Versus {
  int compared = 0;
  int faster = 0; ///< runs the synthesized schedule is strictly faster than
};

Versus versus_compare(const ppsim::RunInput &input,
                      const std::vector<ppsim::SearchedForm> &searched,
                      const std::vector<std::string> &policies) {
  const ppsim::SearchedForm &best = searched.front();
  ppsim::RankRequest request = ppsim::rank_request(input);
  request.policies = policies;
  const ppsim::Ranking ranking = ppsim::rank_runs(request).front();
  Versus versus;
  for (const ppsim::RankedRun &run : ranking.runs) {
    if (!run.fits())
      continue;
    const ppsim::ScheduleInfo &info = ppsim::find_schedule(run.schedule);
    const bool same = std::any_of(searched.begin(), searched.end(), [&](const auto &form) {
      const ppsim::ScheduleInfo &own = ppsim::find_schedule(form.run.input.schedule);
      return own.placement == info.placement && own.split_backward == info.split_backward;
    });
    if (!same)
      continue;
    CAPTURE(run.schedule);
    CAPTURE(run.policy);
    const ppsim::Rational theirs = run.evaluation->makespan();
    const ppsim::Rational ours = best.run.scenario.time_scale.exact_units(best.result.makespan);
    CHECK(!(theirs < ours));
    ++versus.compared;
    versus.faster += ours < theirs ? 1 : 0;
  }
  return versus;
}

/// LLaMA-2 7B's cost file on 1F1B (its form alone, as with --schedule), p = 4, m = 16, under a
/// 30 GiB budget, with the rotor front's first four checkpoint levels beside measured selective
/// recomputation (docs/remat.md, "Checkpoint levels"): the ILP's plan uses the levels there.
ppsim::RunInput llama_with_levels() {
  ppsim::RunInput input =
      ppsim::read_scenario_file(PPSIM_SOURCE_DIR "/scenarios/models/llama2-7b.toml");
  input.schedule = "1f1b";
  input.origins["pipeline.schedule"] = ppsim::SourceLocation{"", 0, "--schedule"};
  input.devices = 4;
  input.microbatches = 16;
  input.budget_bytes = 30.0 * (1ULL << 30);
  input.remat_checkpoint_levels = 4;
  input.remat_time_limit_seconds = 60;
  return input;
}

} // namespace

TEST_CASE("a move is refused when it breaks a fixed order, the cap or the dependencies, and a "
          "kept one is timed as the engine times it") {
  // 1F1B p = 2, m = 3, cap 2: device 0 runs F0 F1 BW0 F2 BW1 BW2 (stage 0), device 1 F0 BW0 F1
  // BW1 F2 BW2 (stage 1).
  ppsim::RunInput input = uniform_input(2, 3, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 2.0;
  const ppsim::testing::Generated generated = ppsim::testing::generate("1f1b", input);
  const ppsim::Scenario &scenario = generated.scenario;
  ppsim::OrderSearch search(scenario, generated.schedule, 1);
  const ppsim::Simulation seed = ppsim::simulate(scenario, generated.schedule);
  CHECK(search.time().makespan == seed.metrics.makespan);
  CHECK(search.time().total_device_end ==
        seed.metrics.devices[0].end + seed.metrics.devices[1].end);
  // BW(1,0) before F(1,0): the fixed order of one (stage, microbatch).
  CHECK(search.try_move(1, 1, 0) == ppsim::MoveOutcome::fixed_order);
  // F(0,2) before BW(0,0): three activations on device 0, over the cap of 2.
  CHECK(search.try_move(0, 3, 2) == ppsim::MoveOutcome::over_cap);
  // F(1,2) first on device 1: it needs F(0,2), which device 0 runs after BW(0,0), which needs
  // BW(1,0), which device 1 would run after F(1,2).
  CHECK(search.try_move(1, 4, 0) == ppsim::MoveOutcome::deadlock);
  CHECK(search.schedule().device_ops == generated.schedule.device_ops);
  CHECK(search.evaluations() == 3);

  // Without the cap, every move: a worse one leaves the orders as they were, a kept one is not
  // worse and is timed as the engine times the new orders.
  input.cap_activations.reset();
  const ppsim::testing::Generated uncapped = ppsim::testing::generate("1f1b", input);
  ppsim::OrderSearch uncapped_search(uncapped.scenario, uncapped.schedule, 1);
  int kept = 0, worse = 0;
  for (int device = 0; device < 2; ++device)
    for (int from = 0; from < 6; ++from)
      for (int to = 0; to < 6; ++to) {
        if (from == to)
          continue;
        const ppsim::Schedule before = uncapped_search.schedule();
        const ppsim::CandidateTime time = uncapped_search.time();
        const ppsim::MoveOutcome outcome = uncapped_search.try_move(device, from, to);
        if (outcome == ppsim::MoveOutcome::kept) {
          ++kept;
          const ppsim::Simulation replay =
              ppsim::simulate(uncapped.scenario, uncapped_search.schedule());
          CHECK(replay.metrics.feasible);
          CHECK(replay.metrics.makespan == uncapped_search.time().makespan);
          CHECK(uncapped_search.time() <= time);
        } else {
          worse += outcome == ppsim::MoveOutcome::worse ? 1 : 0;
          CHECK(uncapped_search.schedule().device_ops == before.device_ops);
          CHECK(uncapped_search.time() == time);
        }
      }
  CHECK(kept > 0);
  CHECK(worse > 0);
}

TEST_CASE("issue_28 a recomputation move: kept where it is free, refused over the cap, timed as "
          "the engine times it") {
  // 1F1B p = 2, m = 3, F = B = W = 1: device 0 runs F(0,0) F(0,1) BW(0,0) ..., idle from 2 to 4
  // while BW(1,0) runs; R(0,0) fits in that bubble.
  ppsim::RunInput input = uniform_input(2, 3, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 2.0;
  const ppsim::testing::Generated generated = ppsim::testing::generate("1f1b", input);
  const ppsim::Scenario &scenario = generated.scenario;
  ppsim::OrderSearch search(scenario, generated.schedule, 1, true);
  const ppsim::CandidateTime before = search.time();
  const ppsim::RematDecision recompute{ppsim::ForwardRemat::full, ppsim::BackwardRemat::none, 0};
  CHECK(search.try_recompute(0, 0, recompute) == ppsim::MoveOutcome::kept);
  CHECK(search.time() == before);
  const ppsim::Schedule kept = search.schedule();
  CHECK(ppsim::plan_of(kept, 2, 3).at(0, 0) == recompute);
  CHECK(ppsim::plan_of(kept, 2, 3).recompute_count() == 1);
  const ppsim::Simulation replay = ppsim::simulate(scenario, kept);
  CHECK(replay.metrics.feasible);
  CHECK(replay.metrics.makespan == search.time().makespan);
  // Device 0 now runs F(0,0) F(0,1) R(0,0) BW(0,0) F(0,2) ...: R stays right before its BW, as
  // PyTorch's checkpointing runs it. The two move as one, whichever is named (here ahead of
  // F(0,1), where BW(0,0) waits for its gradient: worse), and nothing lands between them.
  CHECK(search.try_move(0, 2, 1) == ppsim::MoveOutcome::worse);
  CHECK(search.try_move(0, 3, 2) == ppsim::MoveOutcome::worse);
  CHECK(search.try_move(0, 4, 3) == ppsim::MoveOutcome::parts_recomputation);
  CHECK(search.try_move(0, 1, 2) == ppsim::MoveOutcome::parts_recomputation);
  CHECK(search.schedule().device_ops == kept.device_ops);
  // R(1,0) between F(1,0) and BW(1,0) on the last device: on the critical path, so worse.
  CHECK(search.try_recompute(1, 0, recompute) == ppsim::MoveOutcome::worse);
  CHECK(search.schedule().device_ops == kept.device_ops);
  // Undoing the recomputation is kept (not worse): the orders are the seed's again.
  CHECK(search.try_recompute(0, 0, {}) == ppsim::MoveOutcome::kept);
  CHECK(search.schedule().device_ops == generated.schedule.device_ops);
  CHECK(search.evaluations() == 7);

  // Cap 1 with full recomputation: dropping R(0,1) would keep F(0,1)'s activation beside
  // R(0,0)'s.
  input.cap_activations = 1.0;
  const ppsim::testing::Generated tight = ppsim::testing::generate("1f1b", input);
  const ppsim::Schedule recomputing =
      ppsim::apply_plan(tight.schedule, ppsim::full_forward_plan(tight.scenario, tight.schedule));
  REQUIRE(ppsim::simulate(tight.scenario, recomputing).metrics.feasible);
  ppsim::OrderSearch capped(tight.scenario, recomputing, 1, true);
  CHECK(capped.try_recompute(0, 1, {}) == ppsim::MoveOutcome::over_cap);
  CHECK(capped.schedule().device_ops == recomputing.device_ops);
}

TEST_CASE("issue_28 recomputation moves on DualPipe-V, whose overlapped ops fuse some backwards") {
  // RW and RBW are offered only where W is an op of its own: once they were offered for a fused
  // BW, and with_decision's refusal ended the whole synthesis.
  ppsim::RunInput input = uniform_input(4, 8, {1, 1}, {2, 1}, {1, 1}, {1, 2});
  const ppsim::testing::Generated generated = ppsim::testing::generate("dualpipev", input);
  ppsim::OrderSearch search(generated.scenario, generated.schedule, 5, true);
  for (int step = 0; step < 2000; ++step)
    search.step();
  const ppsim::Simulation replay = ppsim::simulate(generated.scenario, search.schedule());
  CHECK(replay.metrics.makespan == search.time().makespan);
  CHECK(search.evaluations() > 1000);
}

TEST_CASE("issue_28 without recomputation the result has none, the exact step's included") {
  // K = 1, p = 2, m = 4: the optimum (11) recomputes; the exact step finds it, but --remat none
  // keeps only its bound.
  ppsim::RunInput input = uniform_input(2, 4, {1, 1}, {1, 1}, {0, 1});
  input.cap_activations = 1.0;
  const ppsim::Scenario scenario = ppsim::testing::scenario_for("1f1b", input);
  ppsim::SynthesisOptions options = with_exact();
  options.recompute = false;
  const ppsim::SynthesisResult result = ppsim::synthesize(scenario, BackwardForm::full, options);
  check_result(scenario, result);
  CHECK(ppsim::plan_of(result.schedule, 2, 4).recompute_count() == 0);
  CHECK(result.makespan == Ticks{16});
  CHECK(result.stop != ppsim::SynthesisStop::exact_optimum);
  CHECK(result.lower_bound <= Ticks{11}); // the optimum with recomputation bounds both
}

TEST_CASE("issue_28 a byte budget over full-remat's peak: it is no seed, the others are") {
  // full-remat runs all forwards first (m checkpoints on device 0), 1F1B with recomputation at
  // most p: a budget between the two. full-remat already recomputes, so it gets no plan (once
  // applying one threw and ended the synthesis).
  ppsim::RunInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {0, 1});
  ppsim::testing::set_accounting_bytes(input, 1600);
  input.schedule = "1f1b";
  const ppsim::PreparedRun full_remat = [&] {
    ppsim::RunInput other = input;
    other.schedule = "full-remat";
    return ppsim::prepare_run(other);
  }();
  REQUIRE_FALSE(ppsim::simulate(full_remat.scenario, full_remat.schedule).metrics.feasible);
  const std::vector<ppsim::SearchedForm> searched = ppsim::synthesize_input(input, quick(2000));
  const ppsim::SearchedForm &best = searched.front();
  check_result(best.run.scenario, best.result);
  // 1F1B recomputing every (s,j), as registered or with full recomputation applied.
  CHECK((best.result.seed == "allremat-1f1b" || best.result.seed == "1f1b + full"));
  CHECK(best.result.makespan <= best.result.seed_makespan);
}

TEST_CASE("issue_28 with_decision replaces one (stage, microbatch)'s recomputation in place") {
  ppsim::RunInput input = uniform_input(2, 3, {1, 1}, {1, 1}, {1, 1});
  const ppsim::testing::Generated generated = ppsim::testing::generate("zb-h1", input);
  ppsim::RematPlan plan(2, 3);
  plan.at(0, 1) = {ppsim::ForwardRemat::full, ppsim::BackwardRemat::activations, 0};
  plan.at(1, 2) = {ppsim::ForwardRemat::none, ppsim::BackwardRemat::full, 0};
  const ppsim::Schedule planned = ppsim::apply_plan(generated.schedule, plan);
  // Building the plan one (s,j) at a time gives the same orders as applying it at once.
  ppsim::Schedule stepwise = ppsim::with_decision(generated.schedule, 0, 1, plan.at(0, 1));
  stepwise = ppsim::with_decision(stepwise, 1, 2, plan.at(1, 2));
  CHECK(stepwise.device_ops == planned.device_ops);
  // Changing a decision moves nothing else; clearing every one gives the base back.
  const ppsim::RematDecision rbw_only{ppsim::ForwardRemat::none, ppsim::BackwardRemat::full, 0};
  plan.at(0, 1) = rbw_only;
  CHECK(ppsim::with_decision(planned, 0, 1, rbw_only).device_ops ==
        ppsim::apply_plan(generated.schedule, plan).device_ops);
  CHECK(ppsim::with_decision(ppsim::with_decision(planned, 0, 1, {}), 1, 2, {}).device_ops ==
        generated.schedule.device_ops);
  // A backward option needs W apart from B.
  const ppsim::testing::Generated fused = ppsim::testing::generate("1f1b", input);
  CHECK_THROWS_AS(ppsim::with_decision(fused.schedule, 0, 0, rbw_only), ppsim::Error);
}

TEST_CASE("issue_28 synthesis is never slower than compare's best for its placement and form") {
  // A seeded sample: single wave and V, fused and split backward, the count model and the byte
  // model (every accounting term of remat), caps and budgets that bind. compare ranks every
  // registered schedule with no recomputation, full recomputation and the ILP's plan.
  std::mt19937 random(28);
  const auto pick = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  int compared = 0, faster = 0;
  for (int trial = 0; trial < 8; ++trial) {
    const int p = pick(2, 4);
    const std::string schedule = std::array{"1f1b", "zb-h1", "zb-v", "1f1b-split"}[trial % 4];
    ppsim::RunInput input = uniform_input(p, pick(p, 3 * p), {pick(1, 3), 1}, {pick(1, 3), 1},
                                          {pick(1, 2), 1}, {pick(0, 1), 1});
    input.schedule = schedule;
    if (trial % 3 == 2)
      ppsim::testing::set_accounting_bytes(input, 100.0 * (p + 4) + 1000.0 * pick(1, p));
    else
      input.cap_activations = static_cast<double>(pick(1, p));
    CAPTURE(trial);
    CAPTURE(schedule);
    ppsim::SynthesisOptions options = quick(3000);
    const std::vector<ppsim::SearchedForm> searched = ppsim::synthesize_input(input, options);
    const ppsim::SearchedForm &best = searched.front();
    check_result(best.run.scenario, best.result);
    const Versus versus = versus_compare(input, searched, {"none", "full", "ilp"});
    compared += versus.compared;
    faster += versus.faster;
  }
  CHECK(compared > 20);
  CHECK(faster > 0);
}

TEST_CASE("issue_28 checkpoint levels and selective recomputation: compare's choices, searched") {
  const ppsim::RunInput input = llama_with_levels();
  const std::vector<ppsim::SearchedForm> searched = ppsim::synthesize_input(input, quick(3000));
  const ppsim::SearchedForm &best = searched.front();
  const ppsim::Scenario &scenario = best.run.scenario;
  // The run's scenario holds the levels the plan names: four of the rotor front, then selective.
  for (int s = 0; s < scenario.stage_count(); ++s)
    CHECK(scenario.selective_levels()[ppsim::at(s)] == 5);
  check_result(scenario, best.result);
  const ppsim::RematPlan plan =
      ppsim::plan_of(best.result.schedule, scenario.stage_count(), scenario.microbatches);
  CHECK(plan.checkpoint_level_count() > 0);
  // Never slower than compare's plans with the same levels, selective included.
  CHECK(versus_compare(input, searched, {"none", "full", "selective", "ilp"}).compared >= 1);
  CHECK(best.result.bounds_note ==
        "the bounds know no byte budget: the gap includes what fitting budget 30 GiB costs");

  // The moves alone reach the levels: from 1F1B with every stage recomputed whole, which fits
  // 34 GB, the search gives some (stage, microbatch) a level's cheaper R where its memory fits.
  ppsim::Scenario roomy = scenario;
  roomy.bytes->cap = 34e9;
  const ppsim::Schedule &base = best.run.schedule; // the generated 1f1b
  REQUIRE(base.recompute_op_count() == 0);
  const ppsim::Schedule whole = ppsim::apply_plan(base, ppsim::full_forward_plan(roomy, base));
  REQUIRE(ppsim::simulate(roomy, whole).metrics.feasible);
  REQUIRE_FALSE(ppsim::simulate(roomy, base).metrics.feasible);
  ppsim::OrderSearch search(roomy, whole, 1, true);
  const ppsim::CandidateTime start = search.time();
  for (int k = 0; k < 2000; ++k)
    search.step();
  CHECK(search.time() < start);
  const ppsim::RematPlan searched_plan =
      ppsim::plan_of(search.schedule(), roomy.stage_count(), roomy.microbatches);
  CHECK(searched_plan.checkpoint_level_count() > 0);
  const ppsim::Simulation replay = ppsim::simulate(roomy, search.schedule());
  CHECK(replay.metrics.feasible);
  CHECK(replay.metrics.makespan == search.time().makespan);

  // Without recomputation the scenario has no levels, and the bound note only the budget's.
  ppsim::RunInput plain = input;
  plain.remat_checkpoint_levels = 0;
  plain.budget_bytes = 40.0 * (1ULL << 30);
  ppsim::SynthesisOptions none = quick(300);
  none.recompute = false;
  const std::vector<ppsim::SearchedForm> orders_only = ppsim::synthesize_input(plain, none);
  CHECK(orders_only.front().run.scenario.most_checkpoint_levels() == 0);
}

TEST_CASE("issue_28 the bounds note under the byte model needs a budget to name") {
  // Byte sizes without a budget: nothing to fit, so no note (once it named "budget 0 bytes",
  // read from an empty optional).
  ppsim::RunInput input = uniform_input(2, 4, {1, 1}, {1, 1}, {1, 1});
  input.memory_model = ppsim::MemoryModel::bytes;
  input.bytes.activation = {1 << 30};
  const std::vector<ppsim::SearchedForm> searched = ppsim::synthesize_input(input, quick(100));
  CHECK(searched.front().result.bounds_note.empty());
}

TEST_CASE("issue_28 under a count cap the memory-time bounds count the levels: no note") {
  ppsim::RunInput input = llama_with_levels();
  input.memory_model = ppsim::MemoryModel::count;
  input.budget_bytes.reset();
  input.microbatches = 8;
  input.cap_activations = 2;
  const std::vector<ppsim::SearchedForm> searched = ppsim::synthesize_input(input, quick(300));
  const ppsim::SearchedForm &best = searched.front();
  check_result(best.run.scenario, best.result);
  CHECK(best.result.bounds_note.empty());
  const ppsim::BoundsReport bounds =
      ppsim::compute_bounds(best.run.scenario, ppsim::BoundsOptions{BackwardForm::full, "", 0});
  CHECK(bounds.find("LB2").has_value());
  CHECK(bounds.find("LB4").has_value());
  CHECK(bounds.best_lower_bound == best.result.lower_bound);
  CHECK(bounds.best_lower_bound <= best.result.makespan);
  CHECK(versus_compare(input, searched, {"none", "full", "selective", "ilp"}).compared >= 2);
}

TEST_CASE("synthesis is valid, within the cap and never slower than a registered schedule") {
  // Seeded grid: single wave and V placements, both backward forms, per-stage costs, latency,
  // caps from 1 activation to uncapped.
  std::mt19937 random(2026);
  std::uniform_int_distribution<int> cost(1, 4);
  int compared = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const int p = 2 + trial % 3;
    const int m = p * (1 + trial % 2);
    const std::string schedule = trial % 4 == 0   ? "1f1b"
                                 : trial % 4 == 1 ? "zb-h1"
                                 : trial % 4 == 2 ? "zb-v"
                                                  : "interleaved-1f1b";
    const int stages = schedule == "zb-v" || schedule == "interleaved-1f1b" ? 2 * p : p;
    ppsim::RunInput input = ppsim::testing::drawn_stage_input(
        p, m, stages, {trial % 3 == 0 ? 1 : 0, 2}, 1, [&] { return cost(random); });
    input.chunks = stages / p;
    if (trial % 3 != 2)
      input.cap_activations = 1.0 + trial % p;
    CAPTURE(trial);
    CAPTURE(schedule);
    const ppsim::ScheduleInfo &info = ppsim::find_schedule(schedule);
    const ppsim::Scenario scenario = ppsim::build_scenario(input, info);
    const BackwardForm form = info.split_backward ? BackwardForm::split : BackwardForm::full;
    const ppsim::SynthesisResult result = ppsim::synthesize(scenario, form, quick());
    check_result(scenario, result);
    compared += check_not_slower_than_registered(scenario, form, result.makespan);
    const ppsim::BoundsReport bounds = ppsim::compute_bounds(scenario, {form, "", 0});
    CHECK(result.lower_bound >= bounds.best_lower_bound);
  }
  CHECK(compared > 12);
}

TEST_CASE("synthesis equals the exact optimum on tiny instances") {
  // p = 2, m = 4, K = 1, F = B = 1 (docs/bounds.md, "Findings on tiny instances"): the optimum is
  // 11, all-remat 1F1B takes 12.
  ppsim::RunInput input = uniform_input(2, 4, {1, 1}, {1, 1}, {0, 1});
  input.cap_activations = 1.0;
  const ppsim::Scenario scenario = ppsim::testing::scenario_for("1f1b", input);
  const ppsim::SynthesisResult result =
      ppsim::synthesize(scenario, BackwardForm::full, with_exact());
  check_result(scenario, result);
  CHECK(result.makespan == Ticks{11});
  CHECK(result.lower_bound == Ticks{11});
  CHECK(result.gap() == 0);

  // Heterogeneous costs, split backward, K = 2, against ppsim optimal.
  std::mt19937 random(7);
  std::uniform_int_distribution<int> cost(1, 3);
  for (int trial = 0; trial < 3; ++trial) {
    ppsim::RunInput tiny =
        ppsim::testing::drawn_stage_input(2, 3, 2, {0, 1}, 1, [&] { return cost(random); });
    tiny.cap_activations = 2.0;
    CAPTURE(trial);
    const ppsim::Scenario small = ppsim::testing::scenario_for("1f1b-split", tiny);
    const ppsim::ExactResult exact = ppsim::exact_optimum(small, BackwardForm::split);
    REQUIRE(exact.proven_optimal);
    const ppsim::SynthesisResult synthesized =
        ppsim::synthesize(small, BackwardForm::split, with_exact());
    check_result(small, synthesized);
    CHECK(synthesized.makespan == exact.makespan);
  }
}

TEST_CASE("synthesis stops as soon as the bound is met") {
  // ZB-H2 meets LB3 = (p-1)F + m(F+B+W) = 27 at F = B = W = 1 (docs/bounds.md, "The bounds"):
  // the seed is optimal and no candidate is timed.
  const ppsim::Scenario scenario =
      ppsim::testing::scenario_for("zb-h1", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  const ppsim::SynthesisResult result = ppsim::synthesize(scenario, BackwardForm::split, quick());
  CHECK(result.stop == ppsim::SynthesisStop::bound_met);
  CHECK(result.evaluations == 0);
  CHECK(result.makespan == Ticks{27});
  CHECK(result.gap() == 0);
}

TEST_CASE("synthesis improves on the seed where the published schedules leave a bubble") {
  // p = 4, m = 8, F = B = W, cap 3: below ZB-H1's p, zb-auto is the fastest registered schedule
  // that fits (37) without recomputation; moving W ops into its bubbles takes it down.
  ppsim::RunInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 3.0;
  const ppsim::Scenario scenario = ppsim::testing::scenario_for("zb-h1", input);
  ppsim::SynthesisOptions orders_only = quick(3000);
  orders_only.recompute = false;
  const ppsim::SynthesisResult result =
      ppsim::synthesize(scenario, BackwardForm::split, orders_only);
  check_result(scenario, result);
  CHECK(result.makespan < result.best_known_makespan);
  CHECK(result.best_known == "zb-auto");
  CHECK(result.improvements > 0);
}

TEST_CASE("synthesis is reproducible: the same seed gives the same orders") {
  ppsim::RunInput input = uniform_input(3, 6, {1, 1}, {2, 1}, {1, 1}, {1, 2});
  input.cap_activations = 2.0;
  const ppsim::Scenario scenario = ppsim::testing::scenario_for("zb-h1", input);
  const ppsim::SynthesisResult first = ppsim::synthesize(scenario, BackwardForm::split, quick());
  const ppsim::SynthesisResult second = ppsim::synthesize(scenario, BackwardForm::split, quick());
  CHECK(first.schedule.device_ops == second.schedule.device_ops);
  CHECK(first.evaluations == second.evaluations);
  CHECK(first.improvements == second.improvements);
}

TEST_CASE("synthesis refuses a cap below one activation, naming K") {
  ppsim::RunInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 0.5;
  const ppsim::Scenario scenario = ppsim::testing::scenario_for("1f1b", input);
  CHECK_THROWS_WITH_AS(
      ppsim::synthesize(scenario, BackwardForm::full, quick()),
      "field 'K': no schedule fits cap 0.5: it is below one activation of some stage",
      ppsim::CapUnreachable);
}

TEST_CASE(
    "synthesis refuses an overlapped F&B op shorter than its parts: its bounds would not hold") {
  ppsim::RunInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.overlap_fb = ppsim::Rational{2, 1};
  const ppsim::Scenario scenario = ppsim::testing::scenario_for("dualpipe", input);
  CHECK_THROWS_WITH_AS(ppsim::synthesize(scenario, BackwardForm::full, quick()),
                       "field 'pipeline.overlap_fb': synthesis certifies its gap with lower bounds "
                       "that take an overlapped F&B op as long as its parts; leave overlap_fb at "
                       "its default",
                       ppsim::Error);
}

TEST_CASE("synthesis certifies only what is proven: random tiny instances against a brute force") {
  // docs/bounds.md, "How the exact optimum is tested": the synthesized makespan is never below the
  // optimum, its bound never above it, and "exact optimum" only where it equals the optimum.
  std::mt19937 random(2035);
  const auto pick = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  int exact_stops = 0;
  for (int trial = 0; trial < 10; ++trial) {
    const int p = pick(2, 3), m = pick(2, 3);
    const bool split = trial % 2 == 0;
    ppsim::RunInput input = uniform_input(p, m, {pick(2, 4), 1}, {pick(1, 2), 1},
                                               {split ? 1 : 0, 1}, {pick(0, 1), 1});
    input.cap_activations = static_cast<double>(pick(1, 2));
    CAPTURE(fmt::format("p={} m={} F={} B={} c={} K={} split={}", p, m,
                        input.forward[0].numerator, input.backward_input[0].numerator,
                        input.latency.numerator, *input.cap_activations, split));
    const BackwardForm form = split ? BackwardForm::split : BackwardForm::full;
    const ppsim::Scenario scenario =
        ppsim::testing::scenario_for(split ? "zb-h1" : "1f1b", input);
    const ppsim::SynthesisResult result = ppsim::synthesize(scenario, form, with_exact());
    check_result(scenario, result);
    ppsim::testing::BruteForce brute_force(scenario, form);
    const auto optimum = brute_force.solve(result.makespan + Ticks{1}, 20'000'000);
    REQUIRE(optimum.has_value());
    CHECK(result.makespan >= optimum->makespan);
    CHECK(result.lower_bound <= optimum->makespan);
    if (result.stop == ppsim::SynthesisStop::exact_optimum ||
        result.stop == ppsim::SynthesisStop::bound_met) {
      CHECK(result.makespan == optimum->makespan);
      ++exact_stops;
    }
  }
  CHECK(exact_stops > 0);
}

TEST_CASE("issue_28 the search alone reaches the brute force's optimum more often with "
          "recomputation moves") {
  // Tiny instances where the cap binds, the exact step off: the local search from the seeds,
  // with and without recomputation (seeds with plans, moves that change an (s,j)'s choice),
  // against the brute force over orders and recomputation choices (tests/bounds/brute_force.h).
  std::mt19937 random(2028);
  const auto pick = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  int optimal_with = 0, optimal_without = 0, trials = 0;
  for (int trial = 0; trial < 16; ++trial) {
    const int p = pick(2, 3), m = 3;
    const bool split = trial % 2 == 0;
    ppsim::RunInput input = uniform_input(p, m, {pick(1, 3), 1}, {pick(1, 2), 1},
                                          {split ? 1 : 0, 1}, {pick(0, 1), 1});
    input.cap_activations = static_cast<double>(pick(1, 2));
    const BackwardForm form = split ? BackwardForm::split : BackwardForm::full;
    const ppsim::Scenario scenario =
        ppsim::testing::scenario_for(split ? "zb-h1" : "1f1b", input);
    CAPTURE(fmt::format("p={} m={} F={} B={} c={} K={} split={}", p, m,
                        input.forward[0].numerator, input.backward_input[0].numerator,
                        input.latency.numerator, *input.cap_activations, split));
    ppsim::SynthesisOptions options = quick(3000);
    const ppsim::SynthesisResult with = ppsim::synthesize(scenario, form, options);
    options.recompute = false;
    const ppsim::SynthesisResult without = ppsim::synthesize(scenario, form, options);
    check_result(scenario, with);
    ppsim::testing::BruteForce brute_force(scenario, form);
    const auto optimum = brute_force.solve(with.makespan + Ticks{1}, 20'000'000);
    if (!optimum) // past the brute force's node budget
      continue;
    CHECK(with.makespan >= optimum->makespan);
    ++trials;
    optimal_with += with.makespan == optimum->makespan ? 1 : 0;
    optimal_without += without.makespan == optimum->makespan ? 1 : 0;
  }
  MESSAGE(fmt::format("optimum reached on {} of {} with recomputation, {} without",
                      optimal_with, trials, optimal_without));
  CHECK(trials >= 12);
  CHECK(optimal_with * 4 >= trials * 3); // 15 of 16 when written, 1 without recomputation
  CHECK(optimal_with > optimal_without);
}

TEST_CASE("issue_28 the level-aware bounds stay below what the search reaches at tight caps") {
  // Tiny instances with checkpoint levels (rotor levels and a selective one) and a cap at the peak
  // of 1F1B with a level on every (s, j), so that the levels decide what fits: the search with its
  // recomputation moves gets near the optimum, and every makespan bound, which counts the levels
  // as options (docs/bounds.md, "LB2 in detail"), stays at or below what it reaches.
  std::mt19937 random(2829);
  const auto pick = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  int binding = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const int p = pick(2, 3), m = pick(2 * p, 8);
    const bool split = trial % 2 == 0;
    ppsim::RunInput input = uniform_input(p, m, {pick(2, 4), 1}, {pick(1, 3), 1},
                                          {split ? 1 : 0, 1}, {pick(0, 1), 1});
    const BackwardForm form = split ? BackwardForm::split : BackwardForm::full;
    ppsim::Scenario scenario = ppsim::testing::scenario_for(split ? "zb-h1" : "1f1b", input);
    const int levels = pick(1, 2);
    for (int s = 0; s < scenario.stage_count(); ++s) {
      ppsim::StageCosts &costs = scenario.stage_costs[ppsim::at(s)];
      ppsim::StageMemory &memory = scenario.activations.stages[ppsim::at(s)];
      for (int k = 0; k < levels; ++k) {
        costs.checkpoint_level_recompute.push_back(Ticks{pick(1, 3)});
        // The last level keeps the least.
        const double kept = (k + 1 == levels ? pick(0, 1) : pick(2, 3)) / 4.0 * memory.stored;
        memory.checkpoint_levels.push_back(
            {kept, kept + pick(0, 2) / 4.0 * memory.stored, trial % 3 == 0 && k == 0});
      }
    }
    ppsim::RematPlan plan(scenario.stage_count(), m);
    for (int s = 0; s < scenario.stage_count(); ++s)
      for (int j = 0; j < m; ++j)
        plan.at(s, j) = {ppsim::ForwardRemat::full, ppsim::BackwardRemat::none,
                         static_cast<std::uint8_t>(j % 3 == 0 ? pick(1, levels) : levels)};
    const ppsim::Schedule seed = ppsim::apply_plan(
        ppsim::generate_schedule(ppsim::find_schedule(split ? "zb-h1" : "1f1b"), scenario, {}),
        plan);
    scenario.activations.cap = ppsim::simulate(scenario, seed).metrics.max_peak_activations();
    CAPTURE(fmt::format("p={} m={} F={} B={} c={} K={} split={} levels={}", p, m,
                        input.forward[0].numerator, input.backward_input[0].numerator,
                        input.latency.numerator, *scenario.activations.cap, split, levels));
    ppsim::OrderSearch search(scenario, seed, 1, true);
    for (int k = 0; k < 4000; ++k)
      search.step();
    const ppsim::Simulation replay = ppsim::simulate(scenario, search.schedule());
    REQUIRE(replay.metrics.feasible);
    REQUIRE(replay.metrics.makespan == search.time().makespan);
    const ppsim::BoundsReport report =
        ppsim::compute_bounds(scenario, ppsim::BoundsOptions{form, "", 0});
    for (const ppsim::NamedBound &bound : report.lower_bounds) {
      CAPTURE(bound.name);
      if (bound.bounds_makespan)
        CHECK(bound.value <= replay.metrics.makespan);
    }
    // Where a memory-time bound is the best one, the levels' memory is what it weighs.
    const ppsim::BoundsReport uncapped = [&] {
      ppsim::Scenario free = scenario;
      free.activations.cap.reset();
      return ppsim::compute_bounds(free, ppsim::BoundsOptions{form, "", 0});
    }();
    binding += report.best_lower_bound > uncapped.best_lower_bound ? 1 : 0;
  }
  MESSAGE(fmt::format("the cap raised the best bound on {} of 24", binding));
  CHECK(binding >= 4);
}

namespace {

/// The fastest feasible makespan over every registered schedule of `scenario`'s placement and
/// `form` with the remat ILP's plan (what `simulate --remat ilp` runs), from `input`.
std::optional<Ticks> fastest_with_ilp_plan(ppsim::RunInput input, BackwardForm form,
                                           const ppsim::Scenario &scenario) {
  std::optional<Ticks> fastest;
  for (const ppsim::ScheduleInfo &info : ppsim::schedule_registry()) {
    if (info.split_backward != (form == BackwardForm::split) ||
        info.placement == ppsim::PlacementKind::dual_pipe ||
        ppsim::make_placement(info.placement, scenario.devices, scenario.chunks) !=
            scenario.stage_device)
      continue;
    input.schedule = info.name;
    input.remat_policy = "ilp";
    input.remat_time_limit_seconds = 2;
    ppsim::PreparedRun run;
    try {
      run = ppsim::prepare_policy_run(input);
    } catch (const ppsim::Error &) { // outside the generator's range, or no plan fits
      continue;
    }
    const ppsim::Simulation simulation = ppsim::simulate(run.scenario, run.schedule);
    if (simulation.metrics.feasible && (!fastest || simulation.metrics.makespan < *fastest))
      fastest = simulation.metrics.makespan;
  }
  return fastest;
}

} // namespace

TEST_CASE("no certified bound is above a schedule with the ILP's plan (RW and RBW included)") {
  // The false bound of RW/RBW (docs/bounds.md, "How the exact optimum is tested"): zb-h2 with the
  // ILP's plan runs in 71 with four RBW; the exact optimum's model once had no RW/RBW and proved
  // 72. Then random small instances: the seeded exact optimum's bound and synthesis's are never
  // above any registered schedule run with its ILP plan.
  struct Case {
    ppsim::RunInput input;
    BackwardForm form;
  };
  std::vector<Case> cases;
  ppsim::RunInput regression = uniform_input(6, 7, {2, 1}, {3, 1}, {1, 1}, {1, 1});
  regression.cap_activations = 6.0;
  cases.push_back({regression, BackwardForm::split});
  std::mt19937 random(36);
  const auto pick = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  for (int trial = 0; trial < 4; ++trial) {
    const bool split = trial % 2 == 0;
    ppsim::RunInput input =
        uniform_input(pick(2, 4), pick(3, 6), {pick(1, 3), 1}, {pick(1, 3), 1},
                      {split ? pick(1, 2) : 0, 1}, {pick(0, 1), 1});
    input.cap_activations = static_cast<double>(pick(1, 3));
    cases.push_back({input, split ? BackwardForm::split : BackwardForm::full});
  }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    CAPTURE(k);
    ppsim::RunInput input = cases[k].input;
    const BackwardForm form = cases[k].form;
    input.schedule = form == BackwardForm::split ? "zb-h1" : "1f1b";
    const ppsim::Scenario scenario = ppsim::prepare_run(input).scenario;
    const std::optional<Ticks> fastest = fastest_with_ilp_plan(input, form, scenario);
    REQUIRE(fastest.has_value());
    if (k == 0)
      CHECK(*fastest == Ticks{71});
    ppsim::ExactOptions exact;
    exact.time_limit_seconds = 1;
    const ppsim::ExactResult optimal = ppsim::seeded_exact_optimum(scenario, form, exact);
    CHECK(optimal.lower_bound <= *fastest);
    if (optimal.proven_optimal)
      CHECK(optimal.makespan <= *fastest);
    ppsim::SynthesisOptions options = quick(2000);
    options.exact_max_start_variables = ppsim::ExactOptions{}.max_start_variables;
    options.time_limit_seconds = 1;
    CHECK(ppsim::synthesize(scenario, form, options).lower_bound <= *fastest);
  }
}

TEST_CASE("the exact optimum's horizon comes from the synthesis search") {
  // The hanayo V of docs/bounds.md, "Exact optimum" (step 1): the known schedules end at 84, the
  // search goes below; the exact optimum starts from the search's schedule.
  ppsim::RunInput input = uniform_input(2, 3, {4, 1}, {1, 1}, {0, 1}, {0, 1}, 2);
  input.cap_activations = 1.0;
  const ppsim::Scenario scenario = ppsim::testing::scenario_for("hanayo", input);
  ppsim::ExactOptions options;
  options.time_limit_seconds = 2; // stopped by it: the answer is the search's schedule, unproven
  const ppsim::ExactResult seeded =
      ppsim::seeded_exact_optimum(scenario, BackwardForm::full, options);
  const ppsim::Incumbent known = ppsim::best_known_schedule(scenario, BackwardForm::full, true);
  CHECK(seeded.incumbent.starts_with("synthesized from "));
  CHECK(seeded.makespan < known.makespan);
  CHECK(seeded.lower_bound <= seeded.makespan);
  const ppsim::Simulation replay = ppsim::simulate(scenario, seeded.schedule);
  CHECK(replay.metrics.feasible);
  CHECK(replay.metrics.makespan == seeded.makespan);
}
