// ZB-V fixed rule on the V placement (docs/schedules.md, "zb-v", oracle O-11).
// Source: PyTorch ScheduleZBVZeroBubble._calculate_single_rank_operations
// (pytorch/pytorch torch/distributed/pipelining/schedules.py); the ZB authors note (PyTorch PR
// #138444) that with F = B = W this rule is already zero-bubble.
#include "base/assert.h"
#include "base/error.h"
#include "base/index.h"
#include "sim/schedules/families.h"
#include "sim/schedules/op_lists.h"

#include <algorithm>
#include <fmt/format.h>

namespace ppsim::schedules {
namespace {

/// Next-microbatch counters of one op kind on one stage; emits nothing past `m` (the rule is
/// written for max(2p-1, m) microbatches and the surplus is dropped).
struct Stream {
  OpKind kind;
  int stage;
  int next = 0;

  void emit(std::vector<Op> &ops, int microbatches) {
    if (next < microbatches)
      ops.push_back(Op::make(kind, stage, next));
    ++next;
  }
};

} // namespace

std::optional<Error> zb_v_precondition(const Scenario &scenario,
                                       const GeneratorOptions & /*options*/) {
  return two_chunks_refusal("zb-v", scenario);
}

Schedule zb_v(const Scenario &scenario, const GeneratorOptions &options) {
  enforce(zb_v_precondition(scenario, options));
  const int p = scenario.devices;
  const int m = scenario.microbatches;
  const int n = std::max(2 * p - 1, m);
  Schedule schedule = empty_schedule(scenario);
  for (int r = 0; r < p; ++r) {
    auto &ops = schedule.device_ops[at(r)];
    ops.reserve(6 * at(m));
    const int a = r;             // descending leg
    const int b = 2 * p - 1 - r; // ascending leg
    Stream fa{OpKind::forward, a}, fb{OpKind::forward, b};
    Stream ba{OpKind::backward_input, a}, bb{OpKind::backward_input, b};
    Stream wa{OpKind::backward_weight, a}, wb{OpKind::backward_weight, b};
    // Steps 1-7 of docs/schedules.md, "zb-v".
    for (int k = 0; k < 2 * (p - r) - 1; ++k)
      fa.emit(ops, m);
    for (int k = 0; k < r; ++k) {
      fb.emit(ops, m);
      fa.emit(ops, m);
    }
    for (int k = 0; k < p - r; ++k) { // W right after its B until the cool-down
      fb.emit(ops, m);
      bb.emit(ops, m);
      wb.emit(ops, m);
    }
    while (fb.next < fa.next || fa.next < n) {
      if (fa.next < n)
        fa.emit(ops, m);
      ba.emit(ops, m);
      wa.emit(ops, m);
      fb.emit(ops, m);
      bb.emit(ops, m);
      wb.emit(ops, m);
    }
    for (int k = 0; k < r; ++k) { // cool-down: B only, their W deferred
      ba.emit(ops, m);
      bb.emit(ops, m);
    }
    for (int k = 0; k < p - r; ++k) {
      ba.emit(ops, m);
      wa.emit(ops, m);
    }
    while (wb.next < n)
      wb.emit(ops, m);
    while (wa.next < n)
      wa.emit(ops, m);
    PPSIM_ASSERT(fa.next == n && fb.next == n && ba.next == n && bb.next == n);
  }
  return schedule;
}

// `(p-1)F + 2m(F+B+W)` for m >= 2p-1 and F = B = W (zero-bubble paper, ZB-V).
std::optional<Ticks> zb_v_closed_form(const UniformCosts &u) {
  if (u.c != Ticks{0} || u.m < 2 * u.p - 1 || !u.all_equal())
    return std::nullopt;
  return (u.p - 1) * u.f + 2 * u.m * u.full();
}

} // namespace ppsim::schedules
