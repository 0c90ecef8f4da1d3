#pragma once
// Re-timing of fixed per-device orders (docs/model.md, "Re-timing fixed orders"): the engine's
// pass (sim/timing_graph.h) over a topological order it keeps, so that after a swap or a move on
// a device it re-times only from the first position the change affects.
#include "sim/scenario.h"
#include "sim/schedule.h"
#include "sim/timing_graph.h"

#include <cstdint>
#include <span>
#include <vector>

namespace ppsim {

/// Holds a schedule's ops, their dependency edges and a topological order consistent with the
/// per-device orders, and times them exactly as Engine::run does. The orders can then be
/// changed by swapping adjacent ops of a device; each swap re-times only from the first position
/// of the topological order it affects.
class Retimer {
public:
  /// The schedule must have passed validate_schedule. Throws Error with the engine's deadlock
  /// message when the per-device orders cannot all run; otherwise times them.
  Retimer(const Scenario &scenario, const Schedule &schedule);
  /// With the index validate_schedule returned for `schedule`.
  Retimer(const Scenario &scenario, const Schedule &schedule, const OpLocator &locator);

  /// Re-times every op from scratch (what a fixed-order evaluation pays).
  void retime();
  /// Swaps the ops at `position` and `position + 1` of `device` and re-times what follows.
  /// Returns false and changes nothing when the swapped orders would deadlock.
  bool swap_adjacent(int device, int position);
  /// Moves the op at `from` of `device` to position `to` (the ops between shift by one) and
  /// re-times once from the first position of the topological order the move affects. Returns
  /// false and changes nothing when the new orders would deadlock.
  bool move(int device, int from, int to);
  /// Moves the `count` consecutive ops of `device` that start at `start` so that they start at
  /// `new_start` (0 <= new_start <= size - count; the ops between shift by `count`), keeping
  /// their order, and re-times once. Returns false and changes nothing when the new orders
  /// would deadlock.
  bool move_block(int device, int start, int count, int new_start);

  /// The last end of any op (the engine's makespan).
  [[nodiscard]] Ticks makespan() const;
  /// Start and end of the op at `position` of `device` in the current orders.
  [[nodiscard]] Ticks start(int device, int position) const;
  [[nodiscard]] Ticks end(int device, int position) const;
  /// The nodes of `device` in its current order; a node is an entry of the schedule given to the
  /// constructor, numbered device by device (OpLocator's entry numbering).
  [[nodiscard]] std::span<const std::int32_t> device_order(int device) const;
  /// The current per-device orders as a schedule (named as the one given).
  [[nodiscard]] Schedule schedule() const;
  [[nodiscard]] std::int32_t op_count() const { return graph_.node_count(); }

private:
  // Times the ops at topological positions [first, op_count), the state before `first` being
  // that of the ops placed before it.
  void retime_from(std::int32_t first);
  // Device and link availability just before topological position `first`.
  void restore_state_before(std::int32_t first);
  // When `node`'s device may start its next op: its end, or with blocking sends the last
  // arrival of its transfers.
  [[nodiscard]] Ticks release_time(std::int32_t node) const;
  // Exchanges the ops at `position` and `position + 1` of `device` in the orders and the
  // topological order, without re-timing; lowers `first_affected` to the first topological
  // position that changed. False, with nothing changed, when that closes a cycle.
  bool exchange(int device, int position, std::int32_t &first_affected);
  // Pearce-Kelly reordering of the topological order after `later` was moved before `earlier`
  // on their device; false when that closes a cycle.
  bool reorder_after_swap(std::int32_t earlier, std::int32_t later);
  [[nodiscard]] std::int32_t node_at(int device, int position) const;

  std::string name_;
  std::vector<Op> ops_; // per node (= the given schedule's entry numbering)
  TimingGraph graph_;

  // Orders: per device its nodes; per node its position there and in the topological order.
  std::vector<std::vector<std::int32_t>> device_order_;
  std::vector<std::int32_t> device_position_;
  std::vector<std::int32_t> topological_;
  std::vector<std::int32_t> rank_; // node -> position in topological_

  TimingState state_;
  std::vector<bool> link_restored_;
  // Reordering scratch (kept to avoid allocating per swap).
  std::vector<std::int32_t> visit_mark_;
  std::int32_t visit_stamp_ = 0;
  std::vector<std::int32_t> forward_set_, backward_set_, stack_, slots_;
};

} // namespace ppsim
