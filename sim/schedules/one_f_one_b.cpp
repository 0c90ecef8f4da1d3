// 1F1B / PipeDream-flush (docs/schedules.md, "1f1b"; Megatron-LM get_pp_rank_microbatches,
// non-interleaved branch, which clamps the warm-up to m).
#include "base/index.h"
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
    auto &ops = schedule.device_ops[at(r)];
    ops.reserve(at(split ? 3 * m : 2 * m));
    const int warmup = std::min(p - 1 - r, m);
    int next_forward = 0;
    int next_backward = 0;
    for (; next_forward < warmup; ++next_forward)
      ops.push_back(Op::make(OpKind::forward, r, next_forward));
    for (int step = 0; step < m - warmup; ++step) {
      ops.push_back(Op::make(OpKind::forward, r, next_forward++));
      push_backward(ops, r, next_backward++, split);
    }
    while (next_backward < m)
      push_backward(ops, r, next_backward++, split);
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

// `(m+p-1)(F+B+W)` (PipeDream-flush, Narayanan et al. 2021).
std::optional<Ticks> one_f_one_b_closed_form(const UniformCosts &u) {
  if (u.c != Ticks{0})
    return std::nullopt;
  return (u.m + u.p - 1) * u.full();
}

// `m(F+B+W) + (p-1)(F+B)`: W runs right after its B, so only F and B cross the pipeline.
std::optional<Ticks> one_f_one_b_split_closed_form(const UniformCosts &u) {
  if (u.c != Ticks{0})
    return std::nullopt;
  return u.m * u.full() + (u.p - 1) * (u.f + u.b);
}

// Microbatches stage `stage` of `stages` holds at its peak: the warm-up forwards plus one.
int one_f_one_b_in_flight(int stages, int stage) { return stages - stage; }

} // namespace ppsim::schedules
