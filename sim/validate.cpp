#include "sim/validate.h"
#include "base/index.h"

#include "base/error.h"
#include "sim/op_locator.h"

#include <fmt/format.h>

#include <algorithm>

namespace ppsim {
namespace {

class Checker {
public:
  Checker(const Scenario &scenario, const Schedule &schedule, const ScheduleOrigin &origin)
      : scenario_(scenario), schedule_(schedule), origin_(origin) {}

  [[noreturn]] void fail_at(int device, int position, const Op &op, const std::string &what) const {
    fail(device,
         fmt::format("device {}, position {}, op {}: {}", device, position, describe(op), what));
  }

  [[noreturn]] void fail(int device, const std::string &sentence) const {
    if (origin_.file.empty()) {
      throw Error(fmt::format("schedule '{}': {}", schedule_.name, sentence));
    }
    throw Error(origin_.file, device >= 0 ? origin_.first_line + device : 0, "", sentence);
  }

  void check_ids_and_placement() const {
    if (schedule_.device_count() != scenario_.devices) {
      fail(-1, fmt::format("has {} device rows but the scenario has p = {}",
                           schedule_.device_count(), scenario_.devices));
    }
    for (int g = 0; g < schedule_.device_count(); ++g) {
      const auto &ops = schedule_.device_ops[at(g)];
      for (int position = 0; position < static_cast<int>(ops.size()); ++position) {
        const Op &op = ops[at(position)];
        if (op.kind() == OpKind::overlapped) {
          if (op.second.kind != OpKind::backward_input && op.second.kind != OpKind::backward_full) {
            fail_at(g, position, op, "an overlapped op pairs a forward with a B or BW");
          }
        }
        for (int part = 0; part < op.sub_op_count(); ++part) {
          const OpRef ref = op.sub_op(part);
          if (ref.stage < 0 || ref.stage >= scenario_.stage_count()) {
            fail_at(
                g, position, op,
                fmt::format("stage {} is outside 0..{}", ref.stage, scenario_.stage_count() - 1));
          }
          if (ref.microbatch < 0 || ref.microbatch >= scenario_.microbatches) {
            fail_at(g, position, op,
                    fmt::format("microbatch {} is outside 0..{}", ref.microbatch,
                                scenario_.microbatches - 1));
          }
          if (ref.level > 0)
            check_level(g, position, op, ref);
          const int owner = scenario_.stage_device[at(ref.stage)];
          if (owner != g) {
            fail_at(g, position, op,
                    fmt::format("stage {} is placed on device {}", ref.stage, owner));
          }
        }
      }
    }
  }

  void check_completeness_and_order(const OpLocator &locator) const {
    if (!locator.duplicates().empty()) {
      const OpRef dup = locator.duplicates().front();
      fail(scenario_.stage_device[at(dup.stage)],
           fmt::format("op {} appears more than once", describe(dup)));
    }
    for (int s = 0; s < scenario_.stage_count(); ++s) {
      const int device = scenario_.stage_device[at(s)];
      for (int j = 0; j < scenario_.microbatches; ++j) {
        check_one(locator, device, s, j);
      }
    }
  }

private:
  // Only an R has a level, and only a level the stage has in its costs and every memory track.
  void check_level(int device, int position, const Op &op, const OpRef &ref) const {
    if (ref.kind != OpKind::recompute_forward)
      fail_at(device, position, op, "only an R has a checkpoint level");
    const auto stage = at(ref.stage);
    std::size_t levels = scenario_.stage_costs[stage].checkpoint_level_recompute.size();
    levels = std::min(levels, scenario_.activations.stages[stage].checkpoint_levels.size());
    if (scenario_.bytes)
      levels = std::min(levels, scenario_.bytes->stages[stage].checkpoint_levels.size());
    if (ref.level > levels) {
      fail_at(device, position, op,
              fmt::format("stage {} has {} checkpoint level{}", ref.stage, levels,
                          levels == 1 ? "" : "s"));
    }
  }

  void check_one(const OpLocator &locator, int device, int s, int j) const {
    const auto at = [&](OpKind kind) { return locator.find(OpRef{kind, s, j}); };
    const auto missing = [&](OpKind kind) {
      fail(device, fmt::format("device {} is missing op {}", device, describe(OpRef{kind, s, j})));
    };
    const auto misordered = [&](OpKind later, OpKind earlier) {
      fail(device, fmt::format("device {}: {} comes before {}", device,
                               describe(OpRef{later, s, j}), describe(OpRef{earlier, s, j})));
    };
    const std::int32_t forward = at(OpKind::forward);
    const std::int32_t full = at(OpKind::backward_full);
    const std::int32_t input = at(OpKind::backward_input);
    const std::int32_t weight = at(OpKind::backward_weight);
    if (forward == OpLocator::kAbsent)
      missing(OpKind::forward);
    if (full != OpLocator::kAbsent &&
        (input != OpLocator::kAbsent || weight != OpLocator::kAbsent)) {
      fail(device,
           fmt::format("device {}: ({},{}) has both a full BW and a split B/W", device, s, j));
    }
    if (full == OpLocator::kAbsent) {
      if (input == OpLocator::kAbsent)
        missing(OpKind::backward_input);
      if (weight == OpLocator::kAbsent)
        missing(OpKind::backward_weight);
    }
    const std::int32_t backward = full != OpLocator::kAbsent ? full : input;
    const OpKind backward_kind =
        full != OpLocator::kAbsent ? OpKind::backward_full : OpKind::backward_input;
    if (backward < forward)
      misordered(backward_kind, OpKind::forward);
    if (weight != OpLocator::kAbsent && weight <= input) {
      misordered(OpKind::backward_weight, OpKind::backward_input);
    }
    const std::int32_t recompute = at(OpKind::recompute_forward);
    if (recompute != OpLocator::kAbsent) {
      if (recompute <= forward)
        misordered(OpKind::recompute_forward, OpKind::forward);
      if (recompute >= backward)
        misordered(backward_kind, OpKind::recompute_forward);
    }
    for (const OpKind kind : {OpKind::recompute_weight_inputs, OpKind::recompute_full_backward}) {
      const std::int32_t before_w = at(kind);
      if (before_w == OpLocator::kAbsent)
        continue;
      if (full != OpLocator::kAbsent) {
        fail(device, fmt::format("device {}: {} needs a split backward", device,
                                 describe(OpRef{kind, s, j})));
      }
      if (before_w <= input)
        misordered(kind, OpKind::backward_input);
      if (before_w >= weight)
        misordered(OpKind::backward_weight, kind);
    }
    if (at(OpKind::recompute_weight_inputs) != OpLocator::kAbsent &&
        at(OpKind::recompute_full_backward) != OpLocator::kAbsent) {
      fail(device, fmt::format("device {}: ({},{}) has both RW and RBW", device, s, j));
    }
  }

  const Scenario &scenario_;
  const Schedule &schedule_;
  const ScheduleOrigin &origin_;
};

} // namespace

OpLocator validate_schedule(const Scenario &scenario, const Schedule &schedule,
                            const ScheduleOrigin &origin) {
  const Checker checker(scenario, schedule, origin);
  checker.check_ids_and_placement();
  OpLocator locator(schedule, scenario.stage_count(), scenario.microbatches);
  checker.check_completeness_and_order(locator);
  return locator;
}

} // namespace ppsim
