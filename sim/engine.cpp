#include "sim/engine.h"
#include "base/index.h"

#include "base/assert.h"
#include "sim/event_queue.h"

#include <algorithm>

namespace ppsim {
namespace {

// Mutable state of one run; every vector is sized once before the loop.
struct RunState {
  std::vector<std::int32_t> unmet;         // per entry: dependencies not yet ended
  std::vector<Ticks> ready;                // per entry: latest arrival among ended dependencies
  std::vector<std::int32_t> next_position; // per device
  std::vector<Ticks> device_free;          // per device
  std::vector<bool> running;               // per device
  std::vector<Ticks> link_free;            // per ordered device pair (contention only)
};

} // namespace

Engine::Engine(const Scenario &scenario, const Schedule &schedule)
    : Engine(scenario, schedule,
             std::make_shared<const OpLocator>(schedule, scenario.stage_count(),
                                               scenario.microbatches)) {}

Engine::Engine(const Scenario &scenario, const Schedule &schedule,
               std::shared_ptr<const OpLocator> locator)
    : scenario_(scenario), schedule_(schedule), locator_(std::move(locator)),
      dependencies_(build_dependencies(scenario, schedule, *locator_)) {
  // An index of another schedule (one a policy replaced) would time the wrong ops.
  for (int g = 0; g < schedule.device_count(); ++g) {
    PPSIM_ASSERT(at(locator_->entry_offset(g + 1) - locator_->entry_offset(g)) ==
                 schedule.device_ops[at(g)].size());
  }
}

Timing Engine::run() const {
  const OpLocator &locator = *locator_; // read on every op of the loop below
  const int devices = schedule_.device_count();
  const std::int32_t entries = locator.entry_count();
  Timing result;
  result.start.assign(at(entries), Ticks{});
  result.end.assign(at(entries), Ticks{});
  std::size_t cross_edges = 0;
  for (const Dependency &edge : dependencies_.edges)
    cross_edges += edge.crosses_devices ? 1 : 0;
  result.transfers.reserve(cross_edges);

  RunState state;
  state.unmet = dependencies_.predecessor_count;
  state.ready.assign(at(entries), Ticks{});
  state.next_position.assign(at(devices), 0);
  state.device_free.assign(at(devices), Ticks{});
  state.running.assign(at(devices), false);
  if (scenario_.link.contention) {
    state.link_free.assign(at(devices) * devices, Ticks{});
  }

  std::vector<Ticks> durations(at(entries));
  for (int g = 0; g < devices; ++g) {
    const auto &ops = schedule_.device_ops[at(g)];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      durations[at(locator.entry_offset(g)) + i] = op_duration(scenario_, ops[i]);
    }
  }

  EventQueue queue(at(devices));
  // Starts device g's next op if all of its dependencies have ended.
  const auto try_start = [&](int g) {
    const auto device = at(g);
    if (state.running[device])
      return;
    const std::int32_t position = state.next_position[device];
    if (position >= locator.entry_offset(g + 1) - locator.entry_offset(g))
      return;
    const std::int32_t entry = locator.entry_offset(g) + position;
    const auto e = at(entry);
    if (state.unmet[e] != 0)
      return;
    const Ticks start = std::max(state.device_free[device], state.ready[e]);
    result.start[e] = start;
    state.running[device] = true;
    queue.push(start + durations[e], g, entry);
  };

  for (int g = 0; g < devices; ++g)
    try_start(g);
  std::vector<bool> ended(at(entries), false);
  std::int32_t ended_count = 0;
  Ticks now{};
  while (!queue.empty()) {
    const Event event = queue.pop();
    PPSIM_ASSERT(event.time >= now);
    now = event.time;
    const auto g = at(event.device);
    const auto e = at(event.entry);
    PPSIM_ASSERT(!ended[e]);
    ended[e] = true;
    ++ended_count;
    result.end[e] = now;
    state.running[g] = false;
    state.device_free[g] = now;
    ++state.next_position[g];

    for (std::int32_t k = dependencies_.successor_offset[e];
         k < dependencies_.successor_offset[e + 1]; ++k) {
      const Dependency &edge = dependencies_.edges[at(k)];
      const auto consumer = at(edge.consumer);
      Ticks arrival = now;
      if (edge.crosses_devices) {
        const std::int32_t to = locator.device_of(edge.consumer);
        Ticks transfer_start = now;
        if (scenario_.link.contention) {
          Ticks &link_free = state.link_free[g * at(devices) + at(to)];
          transfer_start = std::max(now, link_free);
          link_free = transfer_start + edge.transfer;
        }
        arrival = transfer_start + edge.transfer;
        if (scenario_.link.blocking) {
          state.device_free[g] = std::max(state.device_free[g], arrival);
        }
        result.transfers.push_back(
            Transfer{event.entry, edge.consumer, event.device, to, transfer_start, arrival});
      }
      state.ready[consumer] = std::max(state.ready[consumer], arrival);
      PPSIM_ASSERT(state.unmet[consumer] > 0);
      if (--state.unmet[consumer] == 0) {
        const int consumer_device = locator.device_of(edge.consumer);
        if (consumer_device != event.device)
          try_start(consumer_device);
      }
    }
    try_start(event.device);
  }

  if (ended_count != entries) {
    throw_deadlock(schedule_, locator, dependencies_, state.next_position, ended);
  }
  return result;
}

} // namespace ppsim
