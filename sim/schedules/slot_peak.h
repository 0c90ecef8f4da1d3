#pragma once
// The peak of live activations along one device's unit slots, kept under moves of single passes
// (docs/schedules.md, "v-min and v-half", steps 3-4), so that the reorder tries a slot in
// O(log slots) instead of recounting the device. Internal to sim/schedules.
#include <cstdint>
#include <vector>

namespace ppsim::schedules::detail {

/// What fills one slot of a device, as the peak counts it.
enum class SlotUse : std::int8_t { free, forward, backward, weight };

/// With weight passes in the slots, the live count after slot s is F(s) - W(s) (passes up to s).
/// Without them every free slot releases one pending backward (a queue served by free slots), so
/// by Lindley's recursion the pending count is P(s) = X(s) - min(0, min_{u<=s} X(u)) with
/// X = B - E (E: free slots up to s), and the live count F - (B - P) is
/// G(s) - min(0, min_{u<=s} X(u)) with G = F - E. A segment tree over the slots holds, per node,
/// max G, min X and the max of G(s) - X(u) over u <= s inside the node; a move adds +-1 or +-2 to
/// G and X over the slots between its two ends.
class SlotPeak {
public:
  /// `free_slots_release`: the device holds no weight passes; a free slot releases a backward.
  SlotPeak(std::vector<SlotUse> slots, bool free_slots_release);

  /// The most live activations after any slot (0 before the first).
  [[nodiscard]] int peak() const;

  /// Moves the pass in slot `from` to the free slot `to`.
  void move(std::int64_t from, std::int64_t to);

private:
  struct Node {
    int max_g = 0;
    int min_x = 0;
    int best = 0; ///< max over s of G(s) - X(u), u <= s, both in the node
    int add_g = 0, add_x = 0;
  };
  void build(std::size_t node, std::int64_t lo, std::int64_t hi, const std::vector<int> &g,
             const std::vector<int> &x);
  void add(std::size_t node, std::int64_t lo, std::int64_t hi, std::int64_t from,
           std::int64_t to, int dg, int dx);
  void apply(std::size_t node, int dg, int dx);
  void pull(std::size_t node);

  std::vector<SlotUse> slots_;
  bool free_slots_release_;
  std::vector<Node> tree_;
};

} // namespace ppsim::schedules::detail
