// Checkpoint levels (docs/remat.md, "Checkpoint levels"): the engine's memory of an R at a level,
// the multi-option ILP against exhaustive enumeration, the greedy with levels, the plan file, and
// levels derived from a zoo model's per-layer costs.
#include "base/error.h"
#include "base/index.h"
#include "bounds/analyzer.h"
#include "remat/baselines.h"
#include "remat/enumerate.h"
#include "remat/option_model.h"
#include "remat/stage_checkpoint.h"
#include "remat/stage_remat_ilp.h"
#include "run/policy.h"
#include "run/prepare.h"
#include "run/scenario_file.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

using namespace ppsim;
using ppsim::testing::uniform_input;

namespace {

struct Level {
  double recompute_f; ///< added backward time, in units of F
  double kept;        ///< bytes kept from F to B
  double peak;        ///< bytes while the backward recomputes
};

// p devices, m microbatches, unit times, the byte sizes of every accounting term (as the ILP
// tests use), and the same levels on every stage.
testing::Generated leveled(const std::string &schedule, int p, int m, double budget,
                           const std::vector<Level> &levels) {
  RunInput input = uniform_input(p, m, {4, 1}, {4, 1}, {4, 1});
  testing::set_accounting_bytes(input, budget);
  testing::Generated generated = testing::generate(schedule, input);
  Scenario &scenario = generated.scenario;
  const auto f = static_cast<double>(scenario.stage_costs[0].forward.count());
  for (int s = 0; s < scenario.stage_count(); ++s) {
    const auto stage = ppsim::at(s);
    for (const Level &level : levels) {
      scenario.stage_costs[stage].checkpoint_level_recompute.push_back(
          Ticks{std::llround(level.recompute_f * f)});
      scenario.bytes->stages[stage].checkpoint_levels.push_back({level.kept, level.peak});
      scenario.activations.stages[stage].checkpoint_levels.push_back(
          {level.kept / 1000, level.peak / 1000});
    }
  }
  return generated;
}

const std::vector<Level> kTwoLevels{{0.25, 500, 900}, {0.5, 200, 700}};

double single_peak(const testing::Generated &g, const std::vector<Op> &ops) {
  Schedule schedule;
  schedule.device_ops = {ops};
  const std::vector<double> peaks = device_peaks(g.scenario, schedule, *g.scenario.bytes);
  return peaks.front();
}

} // namespace

TEST_CASE("an R at a checkpoint level: kept after F, the level's peak, a split B's W stash") {
  const testing::Generated g = leveled("1f1b-split", 1, 1, 1e9, kTwoLevels);
  const auto order = [](std::uint8_t level, bool split) {
    std::vector<Op> ops{Op::make(OpKind::forward, 0, 0),
                        Op::make(OpKind::recompute_forward, 0, 0, level)};
    if (split) {
      ops.push_back(Op::make(OpKind::backward_input, 0, 0));
      ops.push_back(Op::make(OpKind::backward_weight, 0, 0));
    } else {
      ops.push_back(Op::make(OpKind::backward_full, 0, 0));
    }
    return ops;
  };
  // Level 1: F keeps 500; R peaks at the level's 900; B leaves W's 600 (100 more than the
  // level kept) and peaks at 600 + 120. Level 2: R peaks at 700; B's 600 + 120 is the peak.
  CHECK(single_peak(g, order(1, true)) == doctest::Approx(900));
  CHECK(single_peak(g, order(2, true)) == doctest::Approx(720));
  // Level 0 is the whole-stage R: the full record (1000) is back before B (+120).
  CHECK(single_peak(g, order(0, true)) == doctest::Approx(1120));
  // Full backward: the level's walk frees each layer's part as it goes and never holds W's 600
  // for every layer at once, so BW peaks at the level's 700; its transients are the level's
  // (the rotor's walk has every layer's), not the stage's (a W transient of 300 adds nothing).
  CHECK(single_peak(g, order(2, false)) == doctest::Approx(700));
  testing::Generated heavy_w = g;
  heavy_w.scenario.bytes->stages[0].peak_backward_weight = 300;
  CHECK(single_peak(heavy_w, order(2, false)) == doctest::Approx(700));
  // A cost file without bwd_w_stash_bytes (every PyTorch import) keeps the whole record for W
  // (1000): a fused BW at a level still peaks at the level's 700 (it used to reserve 1000 at R,
  // so checkpointing at p = 1 saved nothing); a split B must hold it.
  testing::Generated whole_stash = g;
  whole_stash.scenario.bytes->stages[0].kept_after_b = 1000;
  CHECK(single_peak(whole_stash, order(2, false)) == doctest::Approx(700));
  CHECK(single_peak(whole_stash, order(2, true)) == doctest::Approx(1120));
  // Each level's R takes its own time.
  const Scenario &scenario = g.scenario;
  const Ticks f = scenario.stage_costs[0].forward;
  CHECK(op_duration(scenario, Op::make(OpKind::recompute_forward, 0, 0, 1)) ==
        Ticks{f.count() / 4});
  CHECK(op_duration(scenario, Op::make(OpKind::recompute_forward, 0, 0, 2)) ==
        Ticks{f.count() / 2});
  CHECK(describe(Op::make(OpKind::recompute_forward, 0, 3, 2)) == "R2(0,3)");
}

TEST_CASE("a level the stage does not have is refused by validation") {
  const testing::Generated g = leveled("1f1b", 1, 1, 1e9, kTwoLevels);
  Schedule schedule;
  schedule.name = "by hand";
  schedule.device_ops = {{Op::make(OpKind::forward, 0, 0),
                          Op::make(OpKind::recompute_forward, 0, 0, 3),
                          Op::make(OpKind::backward_full, 0, 0)}};
  CHECK_THROWS_WITH(
      simulate(g.scenario, schedule),
      "schedule 'by hand': device 0, position 1, op R3(0,0): stage 0 has 2 checkpoint levels");
}

TEST_CASE("multi-option ILP == exhaustive enumeration over R, its levels, RW and RBW") {
  constexpr IlpOptions kExact{60, 0};
  int feasible = 0, infeasible = 0, used_levels = 0;
  for (const std::string schedule : {"1f1b", "1f1b-split", "zb-h1"}) {
    for (double budget = 700; budget <= 2300; budget += 200) {
      CAPTURE(schedule);
      CAPTURE(budget);
      const testing::Generated g = leveled(schedule, 2, 2, budget, kTwoLevels);
      const auto best = enumerate_best_plan(g.scenario, g.schedule);
      if (!best) {
        CHECK_THROWS_AS(solve_stage_remat(g.scenario, g.schedule, kExact), Error);
        ++infeasible;
        continue;
      }
      const RematSolution solution = solve_stage_remat(g.scenario, g.schedule, kExact);
      REQUIRE(solution.status == solver::Status::optimal);
      CHECK(replayed_objective(solution.simulation.metrics) == best->objective);
      CHECK(static_cast<double>(solution.simulation.metrics.max_span.count()) ==
            doctest::Approx(solution.objective).epsilon(1e-6));
      CHECK(solution.simulation.metrics.feasible);
      used_levels += solution.plan.checkpoint_level_count() > 0;
      ++feasible;
      // The greedy start fits wherever it finds a plan, and is never better than the optimum.
      if (const std::optional<RematPlan> greedy = greedy_plan(g.scenario, g.schedule)) {
        const Simulation replay = simulate(g.scenario, apply_plan(g.schedule, *greedy));
        CHECK(replay.metrics.feasible);
        CHECK(replayed_objective(replay.metrics) >= best->objective);
      }
    }
  }
  // The grid reaches both ends and plans that need the levels.
  CHECK(feasible > 0);
  CHECK(infeasible > 0);
  CHECK(used_levels > 0);
}

TEST_CASE("levels make budgets feasible that whole-stage R cannot meet, or meet them faster") {
  // At 900 bytes, 1f1b on p = 1 cannot run B after a whole-stage R (1000 + 120) nor keep the
  // record; level 1 fits (peak 900) for a quarter of F.
  const testing::Generated without = leveled("1f1b", 1, 2, 900, {});
  CHECK_THROWS_WITH(solve_stage_remat(without.scenario, without.schedule, IlpOptions{60, 0}),
                    doctest::Contains("cannot fit schedule '1f1b' within budget 900 bytes"));
  const testing::Generated with = leveled("1f1b", 1, 2, 900, kTwoLevels);
  const RematSolution solution = solve_stage_remat(with.scenario, with.schedule, IlpOptions{60, 0});
  REQUIRE(solution.found());
  CHECK(solution.plan.checkpoint_level_count() == 2);
  CHECK(solution.plan.at(0, 0).level == 1);
}

TEST_CASE("the elf form refuses checkpoint levels") {
  const testing::Generated g = leveled("1f1b-split", 2, 2, 2000, kTwoLevels);
  IlpOptions elf{60, 0};
  elf.form = IlpForm::elf;
  CHECK_THROWS_WITH(solve_stage_remat(g.scenario, g.schedule, elf),
                    "the elf form has no checkpoint levels: solve them in the ppsim form");
}

TEST_CASE("a plan file carries levels: level:K written and read back, level:0 refused") {
  RematPlan plan(2, 2);
  plan.at(0, 1) = {ForwardRemat::full, BackwardRemat::activations, 3};
  plan.at(1, 0) = {ForwardRemat::full, BackwardRemat::none, 0};
  const std::string text = format_plan_csv(plan);
  CHECK(text == "stage,microbatch,fwd,bwd\n0,1,level:3,activations\n1,0,full,none\n");
  CHECK(parse_plan_csv(text, "plan.csv", 2, 2) == plan);
  CHECK(plan.forward_count() == 2);
  CHECK(plan.checkpoint_level_count() == 1);
  CHECK_THROWS_WITH(
      parse_plan_csv("stage,microbatch,fwd,bwd\n0,0,level:0,none\n", "plan.csv", 2, 2),
      "plan.csv:2: field 'fwd': checkpoint levels are numbered from 1 (level:0 is written full)");
  CHECK_THROWS_WITH(
      parse_plan_csv("stage,microbatch,fwd,bwd\n0,0,level:x,none\n", "plan.csv", 2, 2),
      "plan.csv:2: field 'fwd': expected an integer in 0..255, got \"x\"");
}

TEST_CASE("levels from a zoo model's layers: spread over the front, and the ILP uses them") {
  RunInput input = read_scenario_file(PPSIM_SOURCE_DIR "/scenarios/models/llama2-7b.toml");
  input.schedule = "1f1b";
  input.microbatches = 32;
  input.budget_bytes = 24.0 * (1ULL << 30);
  const PreparedRun run = prepare_run(input);
  RunInput asking = run.input;
  asking.remat_checkpoint_levels = 4;
  const Scenario scenario = scenario_with_remat_levels(asking, run.scenario);
  for (int s = 0; s < scenario.stage_count(); ++s) {
    CAPTURE(s);
    const auto &levels = scenario.bytes->stages[ppsim::at(s)].checkpoint_levels;
    const auto &times = scenario.stage_costs[ppsim::at(s)].checkpoint_level_recompute;
    // Up to four levels of the rotor front (those that keep less than the stage's record), then
    // selective recomputation (the cost file measures it).
    REQUIRE(levels.size() >= 4);
    REQUIRE(levels.size() <= 5);
    REQUIRE(times.size() == levels.size());
    CHECK(levels.back().selective);
    CHECK(scenario.selective_levels()[ppsim::at(s)] == static_cast<int>(levels.size()));
    for (std::size_t k = 1; k + 1 < levels.size(); ++k) {
      CHECK(levels[k].kept < levels[k - 1].kept); // less memory ...
      CHECK(times[k] > times[k - 1]);             // ... for more recomputation
    }
    CHECK(levels.front().kept < scenario.bytes->stages[ppsim::at(s)].stored);
  }
  // With FlashAttention's small records the levels' gain is small but real: 2103 ms with
  // whole-stage R, 2091 ms with the levels, over the uncapped 2080 ms (docs/remat.md,
  // "Levels of the rotor front").
  const IlpOptions options{60, 0.005};
  const RematSolution whole = solve_stage_remat(run.scenario, run.schedule, options);
  const RematSolution with = solve_stage_remat(scenario, run.schedule, options);
  REQUIRE(whole.found());
  REQUIRE(with.found());
  CHECK(with.simulation.metrics.feasible);
  CHECK(static_cast<double>(with.simulation.metrics.max_span.count()) ==
        doctest::Approx(with.objective).epsilon(1e-6));
  CHECK(with.simulation.metrics.max_span < whole.simulation.metrics.max_span);
  CHECK(with.plan.checkpoint_level_count() > 0);
}

TEST_CASE("issue_29 a level's R is the time it adds, also where a recomputation is cheaper") {
  // Four equal layers whose recomputation stops early (PyTorch's non-reentrant checkpoint): R is
  // 0.5 of F. Checkpointing three of them (CCCS) adds their three recomputations, 3 x 0.5 ms, to
  // the step: the rotor moves the cheap forward before and the full one into the backward, so
  // its backward alone grows by 3 x 1 ms, which used to be the level's R.
  const std::string path = "levels_cheap_recompute.csv";
  {
    std::ofstream file(path);
    file << "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,recompute_ms,input_bytes,"
            "output_bytes,activation_bytes_full\n";
    for (int layer = 0; layer < 4; ++layer)
      file << "1," << layer << ",1,1.125,0.875,0.5,100,100,1000\n"; // ticks of 0.5 ms
  }
  RunInput input;
  input.devices = 1;
  input.microbatches = 1;
  input.costs_files = {path};
  input.remat_checkpoint_levels = 8;
  const PreparedRun run = prepare_run(input);
  const Scenario leveled = scenario_with_remat_levels(run.input, run.scenario);
  const CostFile costs = read_cost_file(path);
  std::remove(path.c_str());
  const std::vector<CheckpointOption> levels = checkpoint_levels(costs.rows, 8);
  bool found = false;
  for (std::size_t k = 0; k < levels.size(); ++k) {
    CAPTURE(k);
    const std::vector<LayerAction> ckpt_3{LayerAction::checkpoint, LayerAction::checkpoint,
                                          LayerAction::checkpoint, LayerAction::store};
    if (levels[k].actions != ckpt_3)
      continue;
    found = true;
    // 1.5 ms against the stage's F of 4 ms.
    CHECK(8 * leveled.stage_costs[0].checkpoint_level_recompute[k].count() ==
          3 * leveled.stage_costs[0].forward.count());
  }
  CHECK(found);
}

TEST_CASE("checkpoint levels need a cost file and at most 8 levels") {
  RunInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  input.remat_checkpoint_levels = 2;
  const testing::Generated g = testing::generate("1f1b", input);
  CHECK_THROWS_WITH(
      scenario_with_remat_levels(input, g.scenario),
      doctest::Contains(
          "checkpoint levels come from a per-layer cost file: give model.costs_file"));
  RunInput parsed;
  CHECK_THROWS_WITH(set_scenario_field_from_text(parsed, "remat.checkpoint_levels", "9",
                                                 {"", 0, "--checkpoint-levels"}),
                    doctest::Contains("expected at most 8 levels, got 9"));
}

TEST_CASE("a plan file naming levels replays with the scenario's checkpoint levels") {
  RunInput input = read_scenario_file(PPSIM_SOURCE_DIR "/scenarios/models/llama2-7b.toml");
  input.schedule = "1f1b";
  input.remat_checkpoint_levels = 2;
  const PreparedRun run = prepare_run(input);
  const std::string path =
      (std::filesystem::temp_directory_path() / "ppsim_level_plan.csv").string();
  std::ofstream(path) << "stage,microbatch,fwd,bwd\n0,0,level:2,none\n3,5,full,none\n";
  const PolicyRun replay =
      apply_remat_policy(run.input, run.scenario, run.schedule, "file:" + path);
  const Simulation simulation = simulate(replay.scenario, replay.schedule);
  CHECK(plan_of(replay.schedule, replay.scenario.stage_count(), replay.scenario.microbatches)
            .checkpoint_level_count() == 1);
  CHECK(simulation.metrics.makespan > Ticks{0});
  // Without checkpoint levels the scenario has one, selective recomputation: level 2 is refused,
  // naming the op.
  RunInput plain = run.input;
  plain.remat_checkpoint_levels = 0;
  CHECK_THROWS_WITH(
      simulate(apply_remat_policy(plain, run.scenario, run.schedule, "file:" + path).scenario,
               apply_remat_policy(plain, run.scenario, run.schedule, "file:" + path).schedule),
      doctest::Contains("op R2(0,0): stage 0 has 1 checkpoint level"));
  std::filesystem::remove(path);
}

TEST_CASE("issue_28 the bounds stay below every registered schedule with random level plans") {
  // Random non-uniform costs and levels (rotor levels and a selective one, docs/remat.md,
  // "Checkpoint levels"), a random plan of none / whole R / a level per (s, j), the cap set to
  // the replay's peak: every makespan bound, which now counts the levels as options, holds.
  std::mt19937 random(2828);
  const auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(random);
  };
  const auto real = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(random);
  };
  int checked = 0, with_lb2 = 0;
  for (const ScheduleInfo &info : schedule_registry()) {
    for (int trial = 0; trial < 3; ++trial) {
      RunInput input;
      input.devices = pick(2, 4);
      input.microbatches = 2 * (input.devices + pick(0, 2)); // DualPipe: even, >= 2p
      input.costs_per_device = false;
      input.memory_model = trial == 2 ? MemoryModel::zb : MemoryModel::count;
      const int stages = input.devices * info.chunks(0) * info.pipes();
      input.forward.clear();
      input.backward_input.clear();
      input.backward_weight.clear();
      for (int s = 0; s < stages; ++s) {
        input.forward.push_back({pick(2, 6), 1});
        input.backward_input.push_back({pick(1, 6), 1});
        input.backward_weight.push_back({pick(0, 4), 1});
        input.recompute_forward.push_back({pick(1, 6), 1});
      }
      input.latency = {pick(0, 2), 1};
      CAPTURE(info.name);
      CAPTURE(trial);
      Scenario scenario = build_scenario(input, info);
      if (info.refusal(scenario, {}))
        continue;
      Schedule base;
      try {
        base = generate_schedule(info, scenario, {});
      } catch (const Error &) {
        continue;
      }
      if (base.recompute_op_count() > 0)
        continue; // the schedule recomputes by itself
      const int levels = pick(1, 3);
      for (int s = 0; s < stages; ++s) {
        StageCosts &costs = scenario.stage_costs[ppsim::at(s)];
        StageMemory &memory = scenario.activations.stages[ppsim::at(s)];
        for (int k = 0; k < levels; ++k) {
          costs.checkpoint_level_recompute.push_back(
              Ticks{std::llround(real(0.0, 1.5) * static_cast<double>(costs.forward.count()))});
          const double kept = real(0.0, 1.0) * memory.stored;
          memory.checkpoint_levels.push_back(
              {kept, kept + real(0.0, 1.0) * memory.stored, k == levels - 1 && trial != 1});
        }
      }
      RematPlan plan(stages, scenario.microbatches);
      for (int s = 0; s < stages; ++s)
        for (int j = 0; j < scenario.microbatches; ++j) {
          const int choice = pick(-1, levels);
          if (choice >= 0)
            plan.at(s, j) = {ForwardRemat::full, BackwardRemat::none,
                             static_cast<std::uint8_t>(choice)};
        }
      const Schedule schedule = apply_plan(base, plan);
      scenario.activations.cap = simulate(scenario, schedule).metrics.max_peak_activations();
      const Simulation capped = simulate(scenario, schedule);
      REQUIRE(capped.metrics.feasible);
      const BoundsReport report = compute_bounds(scenario, bounds_options_for(info));
      CHECK(report.cap_fits_one_activation);
      with_lb2 += report.find("LB2").has_value() ? 1 : 0;
      for (const NamedBound &bound : report.lower_bounds) {
        CAPTURE(bound.name);
        if (bound.bounds_makespan)
          CHECK(bound.value <= capped.metrics.makespan);
      }
      ++checked;
    }
  }
  CHECK(checked >= static_cast<int>(schedule_registry().size()));
  CHECK(with_lb2 == checked);
}
