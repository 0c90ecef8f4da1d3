#include "remat/option_model.h"
#include "base/index.h"

#include "base/error.h"
#include "sim/memory.h"
#include "sim/op_locator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ppsim {

bool takes(const RematDecision &decision, int choice) {
  if (is_forward_choice(choice))
    return decision.forward == ForwardRemat::full && decision.level == level_of_choice(choice);
  return decision.backward ==
         (choice == kWeightInputChoice ? BackwardRemat::activations : BackwardRemat::full);
}

int checkpoint_levels(const Scenario &scenario, const MemoryTrack &track, int stage) {
  const auto s = at(stage);
  return static_cast<int>(std::min(scenario.stage_costs[s].checkpoint_level_recompute.size(),
                                   track.stages[s].checkpoint_levels.size()));
}

StageEffects StageEffects::engine(const Scenario &scenario, const MemoryTrack &track, int stage) {
  const int levels = checkpoint_levels(scenario, track, stage);
  if (levels > kMaxStageLevels) {
    throw Error(fmt::format("stage {} has {} checkpoint levels; the remat ILP takes at most {}",
                            stage, levels, kMaxStageLevels));
  }
  // The effects of every op kind on one-microbatch orders with and without each option, split
  // (B, W) and full (BW) alike, so a stage may mix both. `level` is the R's (none when -1).
  const auto probe = [&](int level, int backward, bool split) {
    Schedule schedule;
    schedule.device_ops.resize(1);
    auto &ops = schedule.device_ops[0];
    const auto push = [&](OpKind kind) { ops.push_back(Op::make(kind, stage, 0)); };
    const auto push_recompute = [&](std::vector<Op> &into) {
      if (level >= 0)
        into.push_back(
            Op::make(OpKind::recompute_forward, stage, 0, static_cast<std::uint8_t>(level)));
    };
    push(OpKind::forward);
    push_recompute(ops);
    if (split) {
      push(OpKind::backward_input);
      if (backward == kWeightInputChoice)
        push(OpKind::recompute_weight_inputs);
      if (backward == kFullBackwardChoice)
        push(OpKind::recompute_full_backward);
      push(OpKind::backward_weight);
    } else {
      push(OpKind::backward_full);
    }
    const OpLocator locator(schedule, scenario.stage_count(), 1);
    const std::vector<MemoryEffect> effects = memory_effects(schedule, locator, track);
    std::array<MemoryEffect, kOpKindCount> by_kind{};
    for (std::size_t i = 0; i < ops.size(); ++i) {
      by_kind[at(ops[i].kind())] = effects[i];
    }
    if (split) { // the full BW of the same (s,j), for stages that mix both
      Schedule full_backward = schedule;
      full_backward.device_ops[0] = {ops.front()};
      push_recompute(full_backward.device_ops[0]);
      full_backward.device_ops[0].push_back(Op::make(OpKind::backward_full, stage, 0));
      const OpLocator full_backward_locator(full_backward, scenario.stage_count(), 1);
      by_kind[at(OpKind::backward_full)] =
          memory_effects(full_backward, full_backward_locator, track).back();
    }
    return by_kind;
  };
  const auto base = probe(-1, -1, true);
  std::array<std::array<MemoryEffect, kOpKindCount>, kChoiceCount> with{};
  with[kWeightInputChoice] = probe(-1, kWeightInputChoice, true);
  with[kFullBackwardChoice] = probe(-1, kFullBackwardChoice, true);
  for (int c = 0; c < kChoiceCount; ++c) {
    if (is_forward_choice(c) && level_of_choice(c) <= levels)
      with[at(c)] = probe(level_of_choice(c), -1, true);
    else if (is_forward_choice(c))
      with[at(c)] = base; // no such level
  }
  StageEffects result;
  result.levels_ = levels;
  for (std::size_t k = 0; k < kOpKindCount; ++k) {
    AffineEffect &e = result.effects_[k];
    const MemoryEffect &b = base[k];
    e.alloc.constant = b.alloc;
    e.release.constant = b.release;
    e.transient.constant = b.transient;
    for (std::size_t c = 0; c < kChoiceCount; ++c) {
      // A full BW has no backward option: its effect does not depend on y or z.
      const MemoryEffect &w =
          (k == at(OpKind::backward_full) && !is_forward_choice(static_cast<int>(c))) ? b
                                                                                      : with[c][k];
      e.alloc.coefficient[c] = w.alloc - b.alloc;
      e.release.coefficient[c] = w.release - b.release;
      e.transient.coefficient[c] = w.transient - b.transient;
    }
  }
  return result;
}

// An op's increment D becomes a negative release, its transient P is checked on top of what is
// resident before it.
StageEffects StageEffects::reference(const StageMemory &m) {
  StageEffects effects;
  const double ck = m.checkpoint;
  const auto set = [&](OpKind kind, Affine increment, Affine transient) {
    AffineEffect &e = effects.effects_[at(kind)];
    e.release.constant = -increment.constant;
    for (std::size_t c = 0; c < kChoiceCount; ++c)
      e.release.coefficient[c] = -increment.coefficient[c];
    e.transient = transient;
  };
  // K^f = M_f - (M_f - ck) x; K^b = M_b - M_ba y - (M_b - ck) z; K^w = M_w.
  set(OpKind::forward, {m.stored, {-(m.stored - ck), 0, 0}},
      {m.peak_forward, {m.peak_checkpointed_forward - m.peak_forward, 0, 0}});
  set(OpKind::backward_input,
      {m.kept_after_b - m.stored, {m.stored - ck, -m.weight_input_share, -(m.kept_after_b - ck)}},
      {m.peak_backward_input,
       {std::max(m.peak_forward, m.stored + m.peak_backward_input) - m.peak_backward_input, 0, 0}});
  set(OpKind::backward_weight,
      {m.kept_after_w - m.kept_after_b, {0, m.weight_input_share, m.kept_after_b - ck}},
      {m.peak_backward_weight,
       {0, m.peak_checkpointed_forward - m.peak_backward_weight,
        std::max({m.peak_forward, m.stored + m.peak_backward_input,
                  m.kept_after_b + m.peak_backward_weight}) -
            m.peak_backward_weight}});
  return effects;
}

Schedule with_all_slots(const Schedule &base) {
  Schedule expanded;
  expanded.name = base.name;
  expanded.device_ops.resize(base.device_ops.size());
  for (std::size_t g = 0; g < base.device_ops.size(); ++g) {
    for (const Op &op : base.device_ops[g]) {
      const OpRef &ref = op.first;
      if (op.kind() == OpKind::overlapped) {
        throw Error(fmt::format("the remat ILP does not support overlapped F&B ops (schedule '{}')",
                                base.name));
      }
      if (is_recompute(ref.kind)) {
        throw Error(fmt::format("schedule '{}' already contains {}; remat applies to a base "
                                "schedule without recomputation",
                                base.name, describe(ref)));
      }
      auto &ops = expanded.device_ops[g];
      if (ref.kind == OpKind::backward_input || ref.kind == OpKind::backward_full) {
        ops.push_back(Op::make(OpKind::recompute_forward, ref.stage, ref.microbatch));
      }
      if (ref.kind == OpKind::backward_weight) {
        ops.push_back(Op::make(OpKind::recompute_weight_inputs, ref.stage, ref.microbatch));
        ops.push_back(Op::make(OpKind::recompute_full_backward, ref.stage, ref.microbatch));
      }
      ops.push_back(op);
    }
  }
  return expanded;
}

DeviceMemoryWalk::DeviceMemoryWalk(const std::vector<StageEffects> &stages, int microbatches,
                                   int option_keys)
    : stages_(stages), microbatches_(microbatches), choices_(kFirstLevelChoice),
      resident_(at(option_keys), 0.0), is_touched_(at(option_keys), 0) {
  for (const StageEffects &stage : stages)
    choices_ = std::max(choices_, kFirstLevelChoice + stage.levels());
}

void DeviceMemoryWalk::start(double constant) {
  for (const int key : touched_) {
    resident_[at(key)] = 0;
    is_touched_[at(key)] = 0;
  }
  touched_.clear();
  settled_ = 0;
  constant_ = constant;
}

Affine DeviceMemoryWalk::during(const OpRef &op) const {
  const AffineEffect &effect = stages_[at(op.stage)].of(op.kind);
  Affine sum;
  sum.constant = effect.alloc.constant + effect.transient.constant;
  for (std::size_t c = 0; c < at(choices_); ++c)
    sum.coefficient[c] = effect.alloc.coefficient[c] + effect.transient.coefficient[c];
  return sum;
}

void DeviceMemoryWalk::advance(const OpRef &op) {
  const AffineEffect &effect = stages_[at(op.stage)].of(op.kind);
  constant_ += effect.alloc.constant - effect.release.constant;
  for (int c = 0; c < choices_; ++c) {
    const auto k = at(c);
    const double delta = effect.alloc.coefficient[k] - effect.release.coefficient[k];
    if (delta == 0)
      continue;
    const int key = option_key(op.stage, op.microbatch, microbatches_, c);
    if (!is_touched_[at(key)]) {
      is_touched_[at(key)] = 1;
      touched_.push_back(key);
    }
    double &resident = resident_[at(key)];
    resident += delta;
    // What an option saves returns to zero once its (s,j) is done; such keys leave the list, so
    // a walk costs the ops times the (s,j) alive at once, not times all of them.
    if (std::abs(resident) <= 1e-12 * std::abs(delta)) {
      resident = 0;
      ++settled_;
    }
  }
  if (2 * settled_ > touched_.size()) {
    std::erase_if(touched_, [&](int key) {
      if (resident_[at(key)] != 0)
        return false;
      is_touched_[at(key)] = 0;
      return true;
    });
    settled_ = 0;
  }
}

} // namespace ppsim
