#include "sim/schedules/slot_peak.h"

#include "base/assert.h"
#include "base/index.h"

#include <algorithm>
#include <utility>

namespace ppsim::schedules::detail {
namespace {

/// What a slot adds to G and X from itself onwards.
struct Contribution {
  int g = 0, x = 0;
};

Contribution contribution(SlotUse use, bool free_slots_release) {
  if (!free_slots_release) {
    // G = F - W, X = 0.
    return {use == SlotUse::forward ? 1 : use == SlotUse::weight ? -1 : 0, 0};
  }
  PPSIM_ASSERT(use != SlotUse::weight);
  switch (use) {
  case SlotUse::free:
    return {-1, -1};
  case SlotUse::forward:
    return {1, 0};
  default:
    return {0, 1};
  }
}

} // namespace

SlotPeak::SlotPeak(std::vector<SlotUse> slots, bool free_slots_release)
    : slots_(std::move(slots)), free_slots_release_(free_slots_release) {
  PPSIM_ASSERT(!slots_.empty());
  std::vector<int> g, x;
  Contribution sum;
  for (const SlotUse use : slots_) {
    const Contribution own = contribution(use, free_slots_release_);
    sum.g += own.g;
    sum.x += own.x;
    g.push_back(sum.g);
    x.push_back(sum.x);
  }
  tree_.resize(4 * slots_.size());
  build(1, 0, static_cast<std::int64_t>(slots_.size()) - 1, g, x);
}

int SlotPeak::peak() const { return std::max({0, tree_[1].max_g, tree_[1].best}); }

void SlotPeak::move(std::int64_t from, std::int64_t to) {
  SlotUse &source = slots_[ppsim::at(from)];
  SlotUse &target = slots_[ppsim::at(to)];
  PPSIM_ASSERT(source != SlotUse::free && target == SlotUse::free && from != to);
  const Contribution pass = contribution(source, free_slots_release_);
  const Contribution hole = contribution(SlotUse::free, free_slots_release_);
  // The prefix counts between the two ends gain the pass and lose the free slot (moving earlier),
  // or the reverse (moving later).
  const int sign = to < from ? 1 : -1;
  add(1, 0, static_cast<std::int64_t>(slots_.size()) - 1, std::min(from, to),
      std::max(from, to) - 1, sign * (pass.g - hole.g), sign * (pass.x - hole.x));
  std::swap(source, target);
}

void SlotPeak::build(std::size_t node, std::int64_t lo, std::int64_t hi, const std::vector<int> &g,
                     const std::vector<int> &x) {
  if (lo == hi) {
    tree_[node] = {.max_g = g[ppsim::at(lo)],
                   .min_x = x[ppsim::at(lo)],
                   .best = g[ppsim::at(lo)] - x[ppsim::at(lo)]};
    return;
  }
  const std::int64_t mid = (lo + hi) / 2;
  build(2 * node, lo, mid, g, x);
  build(2 * node + 1, mid + 1, hi, g, x);
  pull(node);
}

void SlotPeak::apply(std::size_t node, int dg, int dx) {
  Node &n = tree_[node];
  n.max_g += dg;
  n.min_x += dx;
  n.best += dg - dx;
  n.add_g += dg;
  n.add_x += dx;
}

void SlotPeak::pull(std::size_t node) {
  const Node &left = tree_[2 * node];
  const Node &right = tree_[2 * node + 1];
  Node &n = tree_[node];
  n.max_g = std::max(left.max_g, right.max_g);
  n.min_x = std::min(left.min_x, right.min_x);
  n.best = std::max({left.best, right.best, right.max_g - left.min_x});
}

void SlotPeak::add(std::size_t node, std::int64_t lo, std::int64_t hi, std::int64_t from,
                   std::int64_t to, int dg, int dx) {
  if (to < lo || hi < from)
    return;
  if (from <= lo && hi <= to) {
    apply(node, dg, dx);
    return;
  }
  Node &n = tree_[node];
  apply(2 * node, n.add_g, n.add_x);
  apply(2 * node + 1, n.add_g, n.add_x);
  n.add_g = n.add_x = 0;
  const std::int64_t mid = (lo + hi) / 2;
  add(2 * node, lo, mid, from, to, dg, dx);
  add(2 * node + 1, mid + 1, hi, from, to, dg, dx);
  pull(node);
}

} // namespace ppsim::schedules::detail
