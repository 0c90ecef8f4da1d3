// remat/option_model: choices, slotted orders, and the affine memory model checked against the
// engine's own memory accounting (sim/memory.h) on the plans it stands for.
#include "base/index.h"
#include "remat/option_model.h"

#include "base/error.h"
#include "sim/memory.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace ppsim;
using ppsim::testing::uniform_input;

namespace {

std::vector<std::string> tokens(const std::vector<Op> &ops) {
  std::vector<std::string> result;
  for (const Op &op : ops)
    result.push_back(describe(op));
  return result;
}

/// Per-device peaks the affine walk predicts for `plan` over the slotted order of `base`.
std::vector<double> predicted_peaks(const Scenario &scenario, const Schedule &base,
                                    const MemoryTrack &track, const RematPlan &plan) {
  const int m = scenario.microbatches;
  std::vector<StageEffects> effects;
  for (int s = 0; s < scenario.stage_count(); ++s)
    effects.push_back(StageEffects::engine(scenario, track, s));
  DeviceMemoryWalk walk(effects, m, scenario.stage_count() * m * kChoiceCount);
  const Schedule slotted = with_all_slots(base);
  const auto on = [&](int key) {
    const int pair = key / kChoiceCount;
    return takes(plan.at(pair / m, pair % m), key % kChoiceCount);
  };
  std::vector<double> peaks;
  for (int g = 0; g < slotted.device_count(); ++g) {
    const double constant =
        track.device_constant.empty() ? 0.0 : track.device_constant[ppsim::at(g)];
    walk.start(constant);
    double peak = constant;
    for (const Op &op : slotted.device_ops[ppsim::at(g)]) {
      const Affine during = walk.during(op.first);
      double memory = walk.constant() + during.constant;
      for (const int key : walk.touched()) {
        if (on(key))
          memory += walk.resident(key);
      }
      for (int c = 0; c < walk.choices(); ++c) {
        if (on(option_key(op.first.stage, op.first.microbatch, m, c)))
          memory += during.coefficient[ppsim::at(c)];
      }
      peak = std::max(peak, memory);
      walk.advance(op.first);
    }
    // A whole device order gives back everything an option changed.
    CHECK(walk.constant() == doctest::Approx(constant));
    for (const int key : walk.touched())
      CHECK(walk.resident(key) == 0);
    peaks.push_back(peak);
  }
  return peaks;
}

/// A deterministic mix of decisions: none, R, RW, RBW, R + RW, R + RBW, R at a level.
RematPlan mixed_plan(const Scenario &scenario, int seed, int levels) {
  RematPlan plan = empty_plan(scenario);
  for (int s = 0; s < scenario.stage_count(); ++s) {
    for (int j = 0; j < scenario.microbatches; ++j) {
      RematDecision &d = plan.at(s, j);
      const int pick = (s * 5 + j * 3 + seed) % (levels > 0 ? 7 : 6);
      if (pick == 1 || pick == 4 || pick == 5 || pick == 6)
        d.forward = ForwardRemat::full;
      if (pick == 6)
        d.level = static_cast<std::uint8_t>(1 + (s + j) % levels);
      if (pick == 2 || pick == 4)
        d.backward = BackwardRemat::activations;
      if (pick == 3 || pick == 5)
        d.backward = BackwardRemat::full;
    }
  }
  return plan;
}

} // namespace

TEST_CASE("choices: x, y, z, then one per checkpoint level") {
  CHECK(kChoiceCount == 3 + kMaxCheckpointLevels + 1); // the rotor's levels and selective
  CHECK(is_forward_choice(kForwardChoice));
  CHECK_FALSE(is_forward_choice(kWeightInputChoice));
  CHECK_FALSE(is_forward_choice(kFullBackwardChoice));
  CHECK(level_of_choice(kForwardChoice) == 0);
  for (int level = 1; level <= kMaxStageLevels; ++level) {
    CAPTURE(level);
    const int choice = choice_of_level(level);
    CHECK(choice == kFirstLevelChoice + level - 1);
    CHECK(is_forward_choice(choice));
    CHECK(level_of_choice(choice) == level);
  }
  CHECK(choice_of_level(0) == kForwardChoice);
  CHECK(option_key(2, 3, 5, kFullBackwardChoice) == (2 * 5 + 3) * kChoiceCount + 2);
}

TEST_CASE("takes: a decision takes exactly its R level and its backward option") {
  const RematDecision none{};
  const RematDecision plain_r{ForwardRemat::full, BackwardRemat::none, 0};
  const RematDecision level_two{ForwardRemat::full, BackwardRemat::activations, 2};
  const RematDecision rbw{ForwardRemat::none, BackwardRemat::full, 0};
  for (int c = 0; c < kChoiceCount; ++c) {
    CAPTURE(c);
    CHECK_FALSE(takes(none, c));
    CHECK(takes(plain_r, c) == (c == kForwardChoice));
    CHECK(takes(level_two, c) == (c == choice_of_level(2) || c == kWeightInputChoice));
    CHECK(takes(rbw, c) == (c == kFullBackwardChoice));
  }
  // A level without R is no choice at all.
  CHECK_FALSE(takes(RematDecision{ForwardRemat::none, BackwardRemat::none, 2}, choice_of_level(2)));
}

TEST_CASE("checkpoint_levels is what both the costs and the memory track offer") {
  auto generated = testing::generate("1f1b-split", uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}));
  Scenario &scenario = generated.scenario;
  MemoryTrack track = scenario.activations;
  CHECK(checkpoint_levels(scenario, track, 0) == 0);
  scenario.stage_costs[0].checkpoint_level_recompute = {Ticks{1}, Ticks{2}, Ticks{3}};
  track.stages[0].checkpoint_levels = {{0.5, 1}, {0.25, 1}};
  CHECK(checkpoint_levels(scenario, track, 0) == 2);
  CHECK(checkpoint_levels(scenario, track, 1) == 0);
  track.stages[0].checkpoint_levels.resize(4);
  CHECK(checkpoint_levels(scenario, track, 0) == 3);
}

TEST_CASE("with_all_slots puts R before each B or BW, RW and RBW before each W") {
  Schedule base;
  base.name = "mixed";
  base.device_ops = {{Op::make(OpKind::forward, 0, 0), Op::make(OpKind::forward, 0, 1),
                      Op::make(OpKind::backward_input, 0, 0),
                      Op::make(OpKind::backward_weight, 0, 0),
                      Op::make(OpKind::backward_full, 0, 1)},
                     {}};
  const Schedule slotted = with_all_slots(base);
  CHECK(slotted.name == "mixed");
  REQUIRE(slotted.device_count() == 2);
  CHECK(tokens(slotted.device_ops[0]) == std::vector<std::string>{"F(0,0)", "F(0,1)", "R(0,0)",
                                                                  "B(0,0)", "RW(0,0)", "RBW(0,0)",
                                                                  "W(0,0)", "R(0,1)", "BW(0,1)"});
  CHECK(slotted.device_ops[1].empty());
}

TEST_CASE("with_all_slots refuses overlapped ops and bases that already recompute") {
  Schedule overlapped;
  overlapped.name = "dualpipe";
  overlapped.device_ops = {{Op::overlap({OpKind::forward, 0, 1}, {OpKind::backward_full, 1, 0})}};
  CHECK_THROWS_WITH_AS(with_all_slots(overlapped),
                       "the remat ILP does not support overlapped F&B ops (schedule 'dualpipe')",
                       Error);
  Schedule recomputing;
  recomputing.name = "allremat-1f1b";
  recomputing.device_ops = {{Op::make(OpKind::forward, 0, 0),
                             Op::make(OpKind::recompute_forward, 0, 0),
                             Op::make(OpKind::backward_full, 0, 0)}};
  CHECK_THROWS_WITH_AS(
      with_all_slots(recomputing),
      "schedule 'allremat-1f1b' already contains R(0,0); remat applies to a base schedule "
      "without recomputation",
      Error);
}

TEST_CASE("StageEffects::reference is ELF's lumped accounting, term by term") {
  StageMemory m;
  m.stored = 10;
  m.kept_after_b = 6;
  m.kept_after_w = 1;
  m.weight_input_share = 2;
  m.checkpoint = 3;
  m.peak_forward = 4;
  m.peak_backward_input = 5;
  m.peak_backward_weight = 7;
  m.peak_checkpointed_forward = 8;
  const StageEffects effects = StageEffects::reference(m);
  CHECK(effects.levels() == 0);
  using C = std::array<double, kChoiceCount>;
  // F: K^f = M_f - (M_f - ck) x, as a negative release; transient Pk_f, or Pk_ckpt under x.
  const AffineEffect &f = effects.of(OpKind::forward);
  CHECK(f.alloc.constant == 0);
  CHECK_FALSE(f.alloc.varies());
  CHECK(f.release.constant == -10);
  CHECK(f.release.coefficient == C{7, 0, 0});
  CHECK(f.transient.constant == 4);
  CHECK(f.transient.coefficient == C{4, 0, 0});
  // B: K^b = M_b - M_f + (M_f - ck) x - M_ba y - (M_b - ck) z.
  const AffineEffect &b = effects.of(OpKind::backward_input);
  CHECK(b.release.constant == 4);
  CHECK(b.release.coefficient == C{-7, 2, 3});
  CHECK(b.transient.constant == 5);
  CHECK(b.transient.coefficient == C{10, 0, 0}); // max(Pk_f, M_f + Pk_b) - Pk_b
  // W: K^w = M_w - M_b + M_ba y + (M_b - ck) z.
  const AffineEffect &w = effects.of(OpKind::backward_weight);
  CHECK(w.release.constant == 5);
  CHECK(w.release.coefficient == C{0, -2, -3});
  CHECK(w.transient.constant == 7);
  CHECK(w.transient.coefficient == C{0, 1, 8}); // Pk_ckpt - Pk_w; max(4, 15, 13) - Pk_w
  // Recomputation has no memory of its own in the reference.
  for (const OpKind kind : {OpKind::backward_full, OpKind::recompute_forward,
                            OpKind::recompute_weight_inputs, OpKind::recompute_full_backward}) {
    const AffineEffect &e = effects.of(kind);
    CHECK(e.release.constant == 0);
    CHECK(e.transient.constant == 0);
    CHECK_FALSE(e.release.varies());
    CHECK_FALSE(e.transient.varies());
  }
}

TEST_CASE("StageEffects::engine: the affine walk predicts the engine's peaks for every plan") {
  for (const bool bytes : {false, true}) {
    CAPTURE(bytes);
    ScenarioInput input = uniform_input(3, 4, {1, 1}, {1, 1}, {1, 1});
    if (bytes)
      testing::set_accounting_bytes(input, 1e12);
    const auto generated = testing::generate("1f1b-split", input);
    const Scenario &scenario = generated.scenario;
    const MemoryTrack &track = bytes ? *scenario.bytes : scenario.activations;
    for (int seed = 0; seed < 6; ++seed) {
      CAPTURE(seed);
      const RematPlan plan = mixed_plan(scenario, seed, 0);
      REQUIRE(plan.recompute_count() > 0);
      const std::vector<double> expected =
          device_peaks(scenario, apply_plan(generated.schedule, plan), track);
      const std::vector<double> predicted =
          predicted_peaks(scenario, generated.schedule, track, plan);
      REQUIRE(predicted.size() == expected.size());
      for (std::size_t g = 0; g < expected.size(); ++g) {
        CAPTURE(g);
        CHECK(predicted[g] == doctest::Approx(expected[g]));
      }
    }
    // The empty plan predicts the base schedule's own peaks.
    CHECK(predicted_peaks(scenario, generated.schedule, track, empty_plan(scenario)) ==
          device_peaks(scenario, generated.schedule, track));
  }
}

TEST_CASE("StageEffects::engine with checkpoint levels: each level is its own exact choice") {
  ScenarioInput input = uniform_input(2, 3, {1, 1}, {1, 1}, {1, 1});
  testing::set_accounting_bytes(input, 1e12);
  auto generated = testing::generate("1f1b-split", input);
  Scenario &scenario = generated.scenario;
  MemoryTrack &track = *scenario.bytes;
  for (int s = 0; s < scenario.stage_count(); ++s) {
    const auto stage = ppsim::at(s);
    scenario.stage_costs[stage].checkpoint_level_recompute = {Ticks{1}, Ticks{1}};
    track.stages[stage].checkpoint_levels = {{300, 700}, {550, 450}};
  }
  const StageEffects effects = StageEffects::engine(scenario, track, 0);
  CHECK(effects.levels() == 2);
  // F allocates the full record (1000 bytes), the checkpoint (100) under x, or what a level
  // keeps (300, 550): the coefficients are the differences.
  const AffineEffect &f = effects.of(OpKind::forward);
  CHECK(f.alloc.constant == 1000);
  CHECK(f.alloc.coefficient[kForwardChoice] == -900);
  CHECK(f.alloc.coefficient[ppsim::at(choice_of_level(1))] == -700);
  CHECK(f.alloc.coefficient[ppsim::at(choice_of_level(2))] == -450);
  CHECK(f.alloc.coefficient[kWeightInputChoice] == 0);
  CHECK(f.alloc.coefficient[ppsim::at(choice_of_level(3))] == 0); // no such level
  for (int seed = 0; seed < 7; ++seed) {
    CAPTURE(seed);
    const RematPlan plan = mixed_plan(scenario, seed, 2);
    const std::vector<double> expected =
        device_peaks(scenario, apply_plan(generated.schedule, plan), track);
    const std::vector<double> predicted =
        predicted_peaks(scenario, generated.schedule, track, plan);
    for (std::size_t g = 0; g < expected.size(); ++g) {
      CAPTURE(g);
      CHECK(predicted[g] == doctest::Approx(expected[g]));
    }
  }
}

TEST_CASE("StageEffects::engine refuses more checkpoint levels than the ILP takes") {
  auto generated = testing::generate("1f1b-split", uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}));
  Scenario &scenario = generated.scenario;
  MemoryTrack track = scenario.activations;
  scenario.stage_costs[1].checkpoint_level_recompute.assign(kMaxStageLevels + 1, Ticks{1});
  track.stages[1].checkpoint_levels.assign(kMaxStageLevels + 1, CheckpointLevelMemory{0.5, 1});
  CHECK_NOTHROW(StageEffects::engine(scenario, track, 0));
  CHECK_THROWS_WITH_AS(StageEffects::engine(scenario, track, 1),
                       "stage 1 has 10 checkpoint levels; the remat ILP takes at most 9", Error);
}

TEST_CASE("DeviceMemoryWalk offers x, y, z plus the most levels of any stage") {
  StageMemory memory;
  memory.stored = 1;
  const std::vector<StageEffects> plain{StageEffects::reference(memory)};
  CHECK(DeviceMemoryWalk(plain, 2, 2 * kChoiceCount).choices() == 3);
  auto generated = testing::generate("1f1b-split", uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}));
  Scenario &scenario = generated.scenario;
  MemoryTrack track = scenario.activations;
  scenario.stage_costs[1].checkpoint_level_recompute.assign(3, Ticks{1});
  track.stages[1].checkpoint_levels.assign(3, CheckpointLevelMemory{0.5, 1});
  const std::vector<StageEffects> levelled{StageEffects::engine(scenario, track, 0),
                                           StageEffects::engine(scenario, track, 1)};
  CHECK(DeviceMemoryWalk(levelled, 2, 4 * kChoiceCount).choices() == 6);
}
