#pragma once
// The event-driven replay's future events (tests/sim/event_replay.h, the engine's oracle),
// ordered by a total key so every run is deterministic.
#include "base/time.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ppsim {

/// The end of a compute op on a device. Transfers and op starts need no events of their own:
/// when an op ends, the arrival time of each of its transfers is already determined (links are
/// served FIFO in the order their producers end, docs/model.md, "Links and ties"), and an op whose
/// inputs are all determined starts at max(device free, latest arrival) without anything in between
/// being able to change that. So the queue holds at most one event per device.
struct Event {
  Ticks time;                 ///< when the op ends
  std::int32_t device = 0;    ///< ties at equal time: lower device first
  std::uint64_t sequence = 0; ///< stamped at push; a last, always-distinct tie breaker
  std::int32_t entry = 0;     ///< the schedule entry that ends (payload, not part of the key)

  /// Strict weak order on (time, device, sequence).
  [[nodiscard]] bool before(const Event &other) const {
    if (time != other.time)
      return time < other.time;
    if (device != other.device)
      return device < other.device;
    return sequence < other.sequence;
  }
};

/// A binary min-heap of Events over a vector reserved up front (no allocation per event).
class EventQueue {
public:
  explicit EventQueue(std::size_t capacity) { heap_.reserve(capacity); }

  void push(Ticks time, std::int32_t device, std::int32_t entry) {
    heap_.push_back(Event{time, device, next_sequence_++, entry});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  /// Removes and returns the earliest event; the queue must not be empty.
  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const Event event = heap_.back();
    heap_.pop_back();
    return event;
  }
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] std::size_t size() const { return heap_.size(); }

private:
  static bool later(const Event &a, const Event &b) { return b.before(a); }
  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

} // namespace ppsim
