// ZB-H1 and ZB-H2, the handcrafted zero-bubble schedules (docs/schedules.md, "zb-h1 and zb-h2").
// Source: sail-sg/zero-bubble-pipeline-parallelism, branch arxiv,
// megatron/core/pipeline_parallel/efficiency.py (get_hand_schedule); arXiv 2401.10241.
#include "base/index.h"
#include "sim/schedules/families.h"
#include "sim/schedules/op_lists.h"

#include <algorithm>

namespace ppsim::schedules {
namespace {

// Device r warms up with min(k(p-1-r), m) forwards, then runs F (while any remain), B, and
// from its (k r)-th B on the oldest pending W: r (H1) or 2r (H2) weight gradients stay
// deferred during the steady state (docs/schedules.md). For m >= k(p-1) this is the paper's
// "after k(p-1) forwards"; for smaller m that form would defer k(p-1) - m, more than k r, and
// be slower (zb-h1 -p 4 -m 2: 12 instead of 11), where this one equals ELF's generator.
Schedule handcrafted(const Scenario &scenario, int warmup_factor) {
  const int p = scenario.devices;
  const int m = scenario.microbatches;
  Schedule schedule = empty_schedule(scenario);
  for (int r = 0; r < p; ++r) {
    auto &ops = schedule.device_ops[at(r)];
    ops.reserve(3 * at(m));
    const int warmup = std::min(warmup_factor * (p - 1 - r), m);
    int next_forward = 0;
    int next_weight = 0;
    for (; next_forward < warmup; ++next_forward)
      ops.push_back(Op::make(OpKind::forward, r, next_forward));
    for (int i = 0; i < m; ++i) {
      if (warmup + i < m)
        ops.push_back(Op::make(OpKind::forward, r, next_forward++));
      ops.push_back(Op::make(OpKind::backward_input, r, i));
      if (i >= warmup_factor * r) {
        ops.push_back(Op::make(OpKind::backward_weight, r, next_weight++));
      }
    }
    while (next_weight < m)
      ops.push_back(Op::make(OpKind::backward_weight, r, next_weight++));
  }
  return schedule;
}

} // namespace

Schedule zb_h1(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  return handcrafted(scenario, 1);
}

Schedule zb_h2(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  return handcrafted(scenario, 2);
}

// `m(F+B+W) + (p-1)(F+B-W)` (zero-bubble paper, arXiv 2401.10241): the W-filled drain matches
// the formula only while W fits in both F and B slots.
std::optional<Ticks> zb_h1_closed_form(const UniformCosts &u) {
  if (u.c != Ticks{0} || u.m < u.p || u.w > std::min(u.f, u.b))
    return std::nullopt;
  return u.m * u.full() + (u.p - 1) * (u.f + u.b - u.w);
}

// `(p-1)F + m(F+B+W)` for m >= 2p-1 and F = B = W (zero-bubble paper).
std::optional<Ticks> zb_h2_closed_form(const UniformCosts &u) {
  if (u.c != Ticks{0} || u.m < 2 * u.p - 1 || !u.all_equal())
    return std::nullopt;
  return (u.p - 1) * u.f + u.m * u.full();
}

// ZB-H1 holds p microbatches at its peak on every stage, ZB-H2 2p - 1 (zero-bubble paper).
int zb_h1_in_flight(int stages, int /*stage*/) { return stages; }
int zb_h2_in_flight(int stages, int /*stage*/) { return 2 * stages - 1; }

} // namespace ppsim::schedules
