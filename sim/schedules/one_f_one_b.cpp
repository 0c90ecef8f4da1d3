// 1F1B / PipeDream-flush (spec schedules.md 2; Megatron-LM get_pp_rank_microbatches,
// non-interleaved branch, which clamps the warm-up to m).
#include "sim/schedules/families.h"
#include "sim/schedules/op_lists.h"

#include <algorithm>

namespace ppsim::schedules {
namespace {

Schedule one_f_one_b_order(const Scenario &scenario, bool split) {
  const int p = scenario.devices;
  const int m = scenario.microbatches;
  Schedule schedule = empty_schedule(scenario);
  for (int r = 0; r < p; ++r) {
    auto &ops = schedule.device_ops[static_cast<std::size_t>(r)];
    ops.reserve(static_cast<std::size_t>(split ? 3 * m : 2 * m));
    const int warmup = std::min(p - 1 - r, m);
    int next_forward = 0;
    int next_backward = 0;
    for (; next_forward < warmup; ++next_forward) ops.push_back(Op::make(OpKind::forward, r, next_forward));
    for (int step = 0; step < m - warmup; ++step) {
      ops.push_back(Op::make(OpKind::forward, r, next_forward++));
      push_backward(ops, r, next_backward++, split);
    }
    while (next_backward < m) push_backward(ops, r, next_backward++, split);
  }
  return schedule;
}

} // namespace

Schedule one_f_one_b(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  return one_f_one_b_order(scenario, false);
}

Schedule one_f_one_b_split(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  return one_f_one_b_order(scenario, true);
}

} // namespace ppsim::schedules
