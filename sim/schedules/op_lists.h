#pragma once
// Small helpers shared by the generators for writing device op lists.
#include "base/index.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <vector>

namespace ppsim::schedules {

/// Appends the backward of (stage, microbatch): one BW, or B then W when `split`.
inline void push_backward(std::vector<Op> &ops, int stage, int microbatch, bool split) {
  if (split) {
    ops.push_back(Op::make(OpKind::backward_input, stage, microbatch));
    ops.push_back(Op::make(OpKind::backward_weight, stage, microbatch));
  } else {
    ops.push_back(Op::make(OpKind::backward_full, stage, microbatch));
  }
}

/// The stages device `device` owns, in increasing order.
inline std::vector<int> local_stages(const Scenario &scenario, int device) {
  std::vector<int> stages;
  for (int s = 0; s < scenario.stage_count(); ++s) {
    if (scenario.stage_device[at(s)] == device)
      stages.push_back(s);
  }
  return stages;
}

/// An empty schedule with one list per device.
inline Schedule empty_schedule(const Scenario &scenario) {
  Schedule schedule;
  schedule.device_ops.resize(at(scenario.devices));
  return schedule;
}

} // namespace ppsim::schedules
