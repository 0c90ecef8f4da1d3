// The serial schedule and the best registered one (docs/bounds.md, "Exact optimum", step 1).
#include "bounds/incumbent.h"
#include "base/index.h"

#include "base/error.h"
#include "sim/memory.h"
#include "sim/metrics.h"
#include "sim/placement.h"
#include "sim/schedules/registry.h"

#include <algorithm>
#include <vector>

namespace ppsim {

Schedule serial_schedule(const Scenario &scenario, BackwardForm form, bool recompute) {
  Schedule schedule;
  schedule.name = "serial";
  schedule.device_ops.resize(at(scenario.devices));
  const auto emit = [&](OpKind kind, int s, int j) {
    schedule.device_ops[at(scenario.stage_device[at(s)])].push_back(Op::make(kind, s, j));
  };
  const int per_pipe = scenario.stages_per_pipe();
  for (int j = 0; j < scenario.microbatches; ++j) {
    for (int pipe = 0; pipe < scenario.pipes; ++pipe) {
      for (int s = pipe * per_pipe; s < (pipe + 1) * per_pipe; ++s)
        emit(OpKind::forward, s, j);
      for (int s = (pipe + 1) * per_pipe - 1; s >= pipe * per_pipe; --s) {
        if (recompute)
          emit(OpKind::recompute_forward, s, j);
        if (form == BackwardForm::full) {
          emit(OpKind::backward_full, s, j);
        } else {
          emit(OpKind::backward_input, s, j);
          emit(OpKind::backward_weight, s, j);
        }
      }
    }
  }
  return schedule;
}

std::vector<Incumbent> known_schedules(const Scenario &scenario, BackwardForm form,
                                       bool recompute) {
  std::vector<Incumbent> known{{"serial", serial_schedule(scenario, form, recompute), Ticks{0}}};
  const Simulation serial = simulate(scenario, known.front().schedule);
  if (!serial.metrics.feasible)
    throw Error("no schedule fits the memory cap: it is below one activation of some stage");
  known.front().makespan = serial.metrics.makespan;
  for (const ScheduleInfo &info : schedule_registry()) {
    if (info.split_backward != (form == BackwardForm::split))
      continue;
    if ((info.placement == PlacementKind::dual_pipe) != (scenario.pipes == 2))
      continue;
    if (make_placement(info.placement, scenario.devices, scenario.chunks) != scenario.stage_device)
      continue;
    if (info.refusal(scenario, {})) // outside this generator's range (m < 2p, odd p, ...)
      continue;
    Schedule schedule;
    try {
      schedule = generate_schedule(info, scenario, {});
    } catch (const CapUnreachable &) {
      continue; // its search finds nothing under the cap: not a candidate
    }
    const Simulation simulation = simulate(scenario, schedule);
    if (simulation.metrics.feasible)
      known.push_back({info.name, std::move(schedule), simulation.metrics.makespan});
  }
  std::stable_sort(known.begin(), known.end(),
                   [](const Incumbent &a, const Incumbent &b) { return a.makespan < b.makespan; });
  return known;
}

Incumbent best_known_schedule(const Scenario &scenario, BackwardForm form, bool recompute) {
  return std::move(known_schedules(scenario, form, recompute).front());
}

bool cap_can_bind(const Scenario &scenario) {
  if (!scenario.activations.cap)
    return false;
  std::vector<double> all_resident(at(scenario.devices), 0.0);
  for (int s = 0; s < scenario.stage_count(); ++s)
    all_resident[at(scenario.stage_device[at(s)])] +=
        scenario.microbatches * scenario.activations.stages[at(s)].stored;
  return over_cap(*std::max_element(all_resident.begin(), all_resident.end()),
                  *scenario.activations.cap);
}

} // namespace ppsim
