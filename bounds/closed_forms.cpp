// Closed forms of spec bounds.md 7; the validity ranges are those the tests confirm against
// simulation (tests/bounds/closed_forms_test.cpp).
#include "bounds/closed_forms.h"

#include <algorithm>

namespace ppsim {
namespace {

/// The common per-stage costs and transfer time when every stage and boundary is alike.
struct Uniform {
  Ticks f, b, w, r, c;
};

std::optional<Uniform> uniform_costs(const Scenario &scenario) {
  if (scenario.stage_costs.empty() || scenario.link.contention || scenario.link.blocking ||
      scenario.overlap_duration)
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
  const std::optional<Uniform> u = uniform_costs(scenario);
  if (!u || scenario.pipes != 1)
    return std::nullopt;
  const std::int64_t p = scenario.devices, m = scenario.microbatches, v = scenario.chunks;
  const Ticks full = u->f + u->b + u->w;
  if (schedule == "gpipe" && v == 1)
    return (m + p - 1) * full + 2 * (p - 1) * u->c;
  if (u->c != Ticks{0})
    return std::nullopt;
  if (schedule == "1f1b")
    return (m + p - 1) * full;
  if (schedule == "1f1b-split")
    return m * full + (p - 1) * (u->f + u->b);
  if (schedule == "interleaved-1f1b") {
    const std::int64_t g = group_size == 0 ? p : group_size;
    if (g != p || m % p != 0)
      return std::nullopt;
    return (v * m + p - 1) * full;
  }
  if (schedule == "hanayo") {
    if (m < p)
      return std::nullopt;
    return v * m * full + 2 * (p - 1) * std::max(u->f, u->b + u->w);
  }
  if (schedule == "zb-h1") {
    // The W-filled drain matches the formula only while W fits in both F and B slots.
    if (m < p || u->w > std::min(u->f, u->b))
      return std::nullopt;
    return m * full + (p - 1) * (u->f + u->b - u->w);
  }
  const bool all_equal = u->f == u->b && u->b == u->w;
  if (schedule == "zb-h2") {
    if (m < 2 * p - 1 || !all_equal)
      return std::nullopt;
    return (p - 1) * u->f + m * full;
  }
  if (schedule == "zb-v") {
    if (m < 2 * p - 1 || !all_equal)
      return std::nullopt;
    return (p - 1) * u->f + 2 * m * full;
  }
  if (schedule == "allremat-1f1b") {
    const Ticks bf = u->b + u->w;
    if (m < 2 || u->f > bf || u->r != u->f || scenario.remat_timing != RematTiming::early)
      return std::nullopt;
    return m * (2 * u->f + bf) + (p - 1) * (u->f + bf) - 2 * u->f;
  }
  return std::nullopt;
}

} // namespace ppsim
