// Schedules that recompute forwards (docs/schedules.md, "Remat schedules"). A forward is
// non-storing exactly when an R(s,j) op exists for it (docs/model.md, "Memory models" and
// "Dependencies"); R sits right before the backward.
#include "sim/schedules/families.h"
#include "sim/schedules/op_lists.h"

namespace ppsim::schedules {
namespace {

/// Inserts R(s,j) immediately before every backward of devices 0..p-2; the last device keeps
/// its activations (its F and backward are adjacent in steady state).
void recompute_all_but_last_device(Schedule &schedule) {
  for (std::size_t g = 0; g + 1 < schedule.device_ops.size(); ++g) {
    std::vector<Op> with_recompute;
    with_recompute.reserve(schedule.device_ops[g].size() * 3 / 2);
    for (const Op &op : schedule.device_ops[g]) {
      if (op.kind() == OpKind::backward_full || op.kind() == OpKind::backward_input) {
        with_recompute.push_back(
            Op::make(OpKind::recompute_forward, op.first.stage, op.first.microbatch));
      }
      with_recompute.push_back(op);
    }
    schedule.device_ops[g] = std::move(with_recompute);
  }
}

} // namespace

Schedule allremat_1f1b(const Scenario &scenario, const GeneratorOptions &options) {
  // The 1F1B order of docs/schedules.md, "1f1b" and "Remat schedules": at most one activation
  // resident per device.
  Schedule schedule = one_f_one_b(scenario, options);
  recompute_all_but_last_device(schedule);
  return schedule;
}

Schedule full_remat(const Scenario &scenario, const GeneratorOptions &options) {
  // ELF generate_full_remat_schedule (topal-team/elf): AFAB on devices 0..p-2, and on the last
  // device F(j), BW(j) for each j, which is 1F1B's last row (warm-up p-1-r = 0).
  Schedule schedule = gpipe(scenario, options);
  schedule.device_ops.back() = one_f_one_b(scenario, options).device_ops.back();
  recompute_all_but_last_device(schedule);
  return schedule;
}

// `m(2F+Bf) + (p-1)(F+Bf) - 2F` for m >= 2, F <= Bf, R = F and early recomputation (ELF).
std::optional<Ticks> allremat_1f1b_closed_form(const UniformCosts &u) {
  const Ticks bf = u.b + u.w;
  if (u.c != Ticks{0} || u.m < 2 || u.f > bf || u.r != u.f ||
      u.remat_timing != RematTiming::early) {
    return std::nullopt;
  }
  return u.m * (2 * u.f + bf) + (u.p - 1) * (u.f + bf) - 2 * u.f;
}

} // namespace ppsim::schedules
