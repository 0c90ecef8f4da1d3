// Closed forms (docs/bounds.md, "Closed forms"): each schedule's formula is a fact of its registry
// entry, written beside its generator; this evaluates it on scenarios whose stages are alike. The
// validity ranges are those the tests confirm against simulation
// (tests/bounds/closed_forms_test.cpp).
#include "bounds/closed_forms.h"

#include "sim/schedules/registry.h"

#include <algorithm>

namespace ppsim {
namespace {

/// The common per-stage costs and transfer time when every stage and boundary is alike.
struct Uniform {
  Ticks f, b, w, r, c;
};

std::optional<Uniform> uniform_costs(const Scenario &scenario) {
  // The formulas know neither busy links, nor an overlapped op's own length, nor the runtime's
  // overhead per action.
  if (scenario.stage_costs.empty() || scenario.link.contention || scenario.link.blocking ||
      scenario.overlap_duration || scenario.op_overhead != Ticks{0})
    return std::nullopt;
  const StageCosts &first = scenario.stage_costs.front();
  for (const StageCosts &costs : scenario.stage_costs) {
    if (costs.forward != first.forward || costs.backward_input != first.backward_input ||
        costs.backward_weight != first.backward_weight ||
        costs.recompute_forward != first.recompute_forward)
      return std::nullopt;
  }
  Ticks c{0};
  for (std::size_t s = 0; s + 1 < scenario.stage_device.size(); ++s) {
    if (scenario.stage_device[s] == scenario.stage_device[s + 1])
      continue;
    if (s >= scenario.boundary_transfer.size())
      continue;
    if (c != Ticks{0} && scenario.boundary_transfer[s] != c)
      return std::nullopt;
    c = std::max(c, scenario.boundary_transfer[s]);
  }
  return Uniform{first.forward, first.backward_input, first.backward_weight,
                 first.recompute_forward, c};
}

} // namespace

std::optional<Ticks> closed_form_makespan(const Scenario &scenario, std::string_view schedule,
                                          int group_size) {
  const ScheduleInfo *info = lookup_schedule(schedule);
  const std::optional<Uniform> u = uniform_costs(scenario);
  if (!info || !info->closed_form || !u || scenario.pipes != 1)
    return std::nullopt;
  return info->closed_form(UniformCosts{u->f, u->b, u->w, u->r, u->c, scenario.devices,
                                        scenario.microbatches, scenario.chunks, group_size,
                                        scenario.remat_timing});
}

} // namespace ppsim
