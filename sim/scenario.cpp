#include "sim/scenario.h"
#include "base/index.h"

#include "base/assert.h"

namespace ppsim {
namespace {

Ticks single_duration(const Scenario &scenario, const OpRef &op) {
  PPSIM_ASSERT(op.stage >= 0 && op.stage < scenario.stage_count());
  const StageCosts &costs = scenario.stage_costs[at(op.stage)];
  switch (op.kind) {
  case OpKind::forward:
    return costs.forward;
  case OpKind::backward_input:
    return costs.backward_input;
  case OpKind::backward_weight:
    return costs.backward_weight;
  case OpKind::backward_full:
    return costs.backward_input + costs.backward_weight;
  case OpKind::recompute_forward:
    if (op.level > 0) {
      PPSIM_ASSERT(op.level <= costs.checkpoint_level_recompute.size());
      return costs.checkpoint_level_recompute[op.level - 1U];
    }
    return costs.recompute_forward;
  case OpKind::recompute_weight_inputs:
    return costs.recompute_weight_inputs;
  case OpKind::recompute_full_backward:
    return costs.recompute_full_backward;
  case OpKind::overlapped:
    break;
  }
  PPSIM_ASSERT(false && "an overlapped op has no single duration");
  return Ticks{};
}

} // namespace

std::vector<int> Scenario::selective_levels() const {
  std::vector<int> levels;
  for (const StageMemory &stage : activations.stages) {
    const auto found = std::find_if(
        stage.checkpoint_levels.begin(), stage.checkpoint_levels.end(),
        [](const CheckpointLevelMemory &level) { return level.selective; });
    levels.push_back(found == stage.checkpoint_levels.end()
                         ? 0
                         : static_cast<int>(found - stage.checkpoint_levels.begin()) + 1);
  }
  return levels;
}

namespace {

// The op's own duration, without the runtime's overhead.
Ticks work_duration(const Scenario &scenario, const Op &op) {
  if (op.kind() != OpKind::overlapped) {
    return single_duration(scenario, op.first);
  }
  if (scenario.overlap_duration) {
    return *scenario.overlap_duration;
  }
  // No overlap gain by default: the two sub-ops back to back (F + B + W for an F;BW pair).
  return single_duration(scenario, op.sub_op(0)) + single_duration(scenario, op.sub_op(1));
}

} // namespace

Ticks op_duration(const Scenario &scenario, const Op &op) {
  // Recomputation runs inside the backward's call (torch.utils.checkpoint), not as an action.
  const bool action = !is_recompute(op.kind());
  return work_duration(scenario, op) + (action ? scenario.op_overhead : Ticks{0});
}

} // namespace ppsim
