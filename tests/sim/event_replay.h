#pragma once
// The event-driven replay the engine ran before it shared the re-timer's core (31f3137's
// Engine::run): a min-heap of op ends ordered by (time, device), each end releasing its
// successors' inputs in the engine's order. Kept here as the oracle the engine and the
// re-timer must equal, op for op and transfer for transfer, deadlock messages included.
#include "base/error.h"
#include "base/index.h"
#include "sim/dependencies.h"
#include "sim/engine.h"
#include "event_queue.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string>
#include <vector>

namespace ppsim::testing {

inline Timing event_replay(const Scenario &scenario, const Schedule &schedule) {
  const OpLocator locator(schedule, scenario.stage_count(), scenario.microbatches);
  const DependencyGraph graph = build_dependencies(scenario, schedule, locator);
  const int devices = schedule.device_count();
  const auto entries = at(locator.entry_count());
  Timing result;
  result.start.assign(entries, Ticks{});
  result.end.assign(entries, Ticks{});
  std::vector<std::int32_t> unmet(entries, 0);
  for (const Dependency &edge : graph.edges)
    ++unmet[at(edge.consumer)];
  std::vector<Ticks> ready(entries);
  std::vector<std::int32_t> next_position(at(devices), 0);
  std::vector<Ticks> device_free(at(devices));
  std::vector<bool> running(at(devices), false);
  std::vector<Ticks> link_free(at(devices) * at(devices));
  std::vector<Ticks> durations(entries);
  for (int g = 0; g < devices; ++g) {
    const auto &ops = schedule.device_ops[at(g)];
    for (std::size_t i = 0; i < ops.size(); ++i)
      durations[at(locator.entry_offset(g)) + i] = op_duration(scenario, ops[i]);
  }
  EventQueue queue(at(devices));
  const auto try_start = [&](int g) {
    const auto device = at(g);
    const std::int32_t position = next_position[device];
    if (running[device] || position >= locator.entry_offset(g + 1) - locator.entry_offset(g))
      return;
    const auto e = at(locator.entry_offset(g) + position);
    if (unmet[e] != 0)
      return;
    result.start[e] = std::max(device_free[device], ready[e]);
    running[device] = true;
    queue.push(result.start[e] + durations[e], g, static_cast<std::int32_t>(e));
  };
  for (int g = 0; g < devices; ++g)
    try_start(g);
  std::vector<bool> ended(entries, false);
  std::size_t ended_count = 0;
  while (!queue.empty()) {
    const Event event = queue.pop();
    const auto g = at(event.device);
    const auto e = at(event.entry);
    ended[e] = true;
    ++ended_count;
    result.end[e] = event.time;
    running[g] = false;
    device_free[g] = event.time;
    ++next_position[g];
    for (std::int32_t k = graph.successor_offset[e]; k < graph.successor_offset[e + 1]; ++k) {
      const Dependency &edge = graph.edges[at(k)];
      Ticks arrival = event.time;
      if (edge.crosses_devices) {
        const std::int32_t to = locator.device_of(edge.consumer);
        Ticks transfer_start = event.time;
        if (scenario.link.contention) {
          Ticks &free = link_free[g * at(devices) + at(to)];
          transfer_start = std::max(event.time, free);
          free = transfer_start + edge.transfer;
        }
        arrival = transfer_start + edge.transfer;
        if (scenario.link.blocking)
          device_free[g] = std::max(device_free[g], arrival);
        result.transfers.push_back(
            Transfer{event.entry, edge.consumer, event.device, to, transfer_start, arrival});
      }
      ready[at(edge.consumer)] = std::max(ready[at(edge.consumer)], arrival);
      if (--unmet[at(edge.consumer)] == 0 && locator.device_of(edge.consumer) != event.device)
        try_start(locator.device_of(edge.consumer));
    }
    try_start(event.device);
  }
  if (ended_count != entries) {
    std::vector<std::string> waits;
    for (int g = 0; g < devices; ++g) {
      const auto &ops = schedule.device_ops[at(g)];
      const std::int32_t position = next_position[at(g)];
      if (position >= static_cast<std::int32_t>(ops.size()))
        continue;
      const std::int32_t entry = locator.entry_offset(g) + position;
      std::string needed = "?";
      for (const Dependency &edge : graph.edges) {
        if (edge.consumer == entry && !ended[at(edge.producer)]) {
          needed = describe(edge.needed);
          break;
        }
      }
      waits.push_back(
          fmt::format("device {} waits at {} for {}", g, describe(ops[at(position)]), needed));
    }
    throw Error(
        fmt::format("schedule '{}' deadlocks: {}", schedule.name, fmt::join(waits, "; ")));
  }
  // The engine's events meet the transfers in time order; it lists them by sender, each
  // sender's in the order it sent them.
  std::stable_sort(result.transfers.begin(), result.transfers.end(),
                   [](const Transfer &a, const Transfer &b) {
                     return a.from_device < b.from_device;
                   });
  return result;
}

} // namespace ppsim::testing
