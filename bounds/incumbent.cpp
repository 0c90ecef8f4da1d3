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

std::vector<RegisteredSchedule> registered_schedules(const Scenario &scenario,
                                                     BackwardForm form) {
  std::vector<RegisteredSchedule> registered;
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
    registered.push_back({{info.name, std::move(schedule), simulation.metrics.makespan},
                          simulation.metrics.feasible});
  }
  return registered;
}

std::vector<Incumbent> known_schedules(const Scenario &scenario, BackwardForm form,
                                       bool recompute) {
  return known_schedules(scenario, form, recompute, registered_schedules(scenario, form));
}

std::vector<Incumbent> known_schedules(const Scenario &scenario, BackwardForm form, bool recompute,
                                       const std::vector<RegisteredSchedule> &registered) {
  std::vector<Incumbent> known;
  Schedule serial = serial_schedule(scenario, form, recompute);
  const Simulation replay = simulate(scenario, serial);
  if (replay.metrics.feasible)
    known.push_back({"serial", std::move(serial), replay.metrics.makespan});
  for (const RegisteredSchedule &candidate : registered)
    if (candidate.fits)
      known.push_back(candidate.run);
  std::stable_sort(known.begin(), known.end(),
                   [](const Incumbent &a, const Incumbent &b) { return a.makespan < b.makespan; });
  return known;
}

Incumbent best_known_schedule(const Scenario &scenario, BackwardForm form, bool recompute) {
  std::vector<Incumbent> known = known_schedules(scenario, form, recompute);
  if (known.empty())
    throw Error("no schedule fits the memory cap: it is below one activation of some stage");
  return std::move(known.front());
}

bool cap_can_bind(const Scenario &scenario) {
  const MemoryTrack &track = checked_track(scenario);
  if (!track.cap)
    return false;
  // What a device would hold at most keeping every activation: its constant, every stored
  // activation of its stages and the largest transient of any of their ops.
  std::vector<double> all_resident(at(scenario.devices), 0.0);
  std::vector<double> transient(at(scenario.devices), 0.0);
  for (int d = 0; d < scenario.devices && at(d) < track.device_constant.size(); ++d)
    all_resident[at(d)] = track.device_constant[at(d)];
  for (int s = 0; s < scenario.stage_count(); ++s) {
    const StageMemory &stage = track.stages[at(s)];
    const auto device = at(scenario.stage_device[at(s)]);
    all_resident[device] += scenario.microbatches * stage.stored;
    transient[device] = std::max({transient[device], stage.peak_forward,
                                  stage.peak_backward_input, stage.peak_backward_weight});
  }
  for (std::size_t d = 0; d < all_resident.size(); ++d)
    if (over_cap(all_resident[d] + transient[d], *track.cap))
      return true;
  return false;
}

} // namespace ppsim
