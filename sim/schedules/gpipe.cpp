// GPipe / all-forward-all-backward (docs/schedules.md, "gpipe"; PyTorch ScheduleGPipe, ELF AFAB).
#include "base/index.h"
#include "sim/schedules/families.h"
#include "sim/schedules/op_lists.h"

namespace ppsim::schedules {

Schedule gpipe(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  Schedule schedule = empty_schedule(scenario);
  for (int g = 0; g < scenario.devices; ++g) {
    auto &ops = schedule.device_ops[at(g)];
    const std::vector<int> stages = local_stages(scenario, g);
    ops.reserve(2 * stages.size() * at(scenario.microbatches));
    for (int j = 0; j < scenario.microbatches; ++j) {
      for (const int s : stages)
        ops.push_back(Op::make(OpKind::forward, s, j));
    }
    for (int j = 0; j < scenario.microbatches; ++j) {
      for (auto s = stages.rbegin(); s != stages.rend(); ++s) {
        push_backward(ops, *s, j, false);
      }
    }
  }
  return schedule;
}

// `(m+p-1)(F+B+W) + 2(p-1)c` on one stage per device (GPipe, arXiv 1811.06965).
std::optional<Ticks> gpipe_closed_form(const UniformCosts &u) {
  if (u.v != 1)
    return std::nullopt;
  return (u.m + u.p - 1) * u.full() + 2 * (u.p - 1) * u.c;
}

} // namespace ppsim::schedules
