#include "sim/retime.h"

#include "base/assert.h"
#include "base/index.h"

#include <algorithm>

namespace ppsim {

Retimer::Retimer(const Scenario &scenario, const Schedule &schedule)
    : Retimer(scenario, schedule,
              OpLocator(schedule, scenario.stage_count(), scenario.microbatches)) {}

Retimer::Retimer(const Scenario &scenario, const Schedule &schedule, const OpLocator &locator)
    : name_(schedule.name),
      graph_(build_timing_graph(scenario, schedule, locator, GraphOutputs::always)),
      topological_(topological_order(graph_, scenario, schedule, locator)),
      state_(graph_, schedule.device_count()) {
  const int devices = schedule.device_count();
  const std::int32_t nodes = graph_.node_count();
  ops_.reserve(at(nodes));
  device_order_.resize(at(devices));
  device_position_.resize(at(nodes));
  for (int g = 0; g < devices; ++g) {
    const auto &list = schedule.device_ops[at(g)];
    auto &order = device_order_[at(g)];
    order.resize(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::int32_t node = locator.entry_offset(g) + static_cast<std::int32_t>(i);
      ops_.push_back(list[i]);
      order[i] = node;
      device_position_[at(node)] = static_cast<std::int32_t>(i);
    }
  }
  rank_.resize(at(nodes));
  for (std::size_t q = 0; q < topological_.size(); ++q)
    rank_[at(topological_[q])] = static_cast<std::int32_t>(q);
  link_restored_.assign(at(graph_.link_count), false);
  visit_mark_.assign(at(nodes), 0);
  retime();
}

void Retimer::retime() { retime_from(0); }

void Retimer::retime_from(std::int32_t first) {
  restore_state_before(first);
  time_in_order(graph_, topological_, first, state_);
}

Ticks Retimer::release_time(std::int32_t node) const {
  Ticks release = state_.end[at(node)];
  if (graph_.blocking) {
    for (std::int32_t k = graph_.output_offset[at(node)]; k < graph_.output_offset[at(node) + 1];
         ++k) {
      const std::int32_t edge = graph_.output_edges[at(k)];
      if (graph_.link(edge) >= 0)
        release = std::max(release, state_.arrival[at(edge)]);
    }
  }
  return release;
}

void Retimer::restore_state_before(std::int32_t first) {
  std::fill(state_.device_free.begin(), state_.device_free.end(), Ticks{});
  std::fill(state_.link_free.begin(), state_.link_free.end(), Ticks{});
  if (first == 0)
    return;
  std::fill(link_restored_.begin(), link_restored_.end(), false);
  for (std::size_t g = 0; g < device_order_.size(); ++g) {
    // Ranks grow along a device's list, so the ops placed before `first` are a prefix of it.
    const auto &order = device_order_[g];
    const auto placed = std::partition_point(
        order.begin(), order.end(), [&](std::int32_t node) { return rank_[at(node)] < first; });
    if (placed == order.begin())
      continue;
    state_.device_free[g] = release_time(*(placed - 1));
    // Each link from g is free after the last transfer its list sent before `first`.
    int unresolved = graph_.contention ? graph_.links_from[g] : 0;
    for (auto node = placed; unresolved > 0 && node != order.begin();) {
      --node;
      for (std::int32_t k = graph_.output_offset[at(*node) + 1];
           unresolved > 0 && k-- > graph_.output_offset[at(*node)];) {
        const std::int32_t edge = graph_.output_edges[at(k)];
        const std::int32_t link = graph_.link(edge);
        if (link >= 0 && !link_restored_[at(link)]) {
          link_restored_[at(link)] = true;
          state_.link_free[at(link)] = state_.arrival[at(edge)];
          --unresolved;
        }
      }
    }
  }
}

bool Retimer::exchange(int device, int position, std::int32_t &first_affected) {
  auto &order = device_order_[at(device)];
  PPSIM_ASSERT(position >= 0 && at(position) + 1 < order.size());
  const std::int32_t earlier = order[at(position)];
  const std::int32_t later = order[at(position) + 1];
  const std::int32_t lowest = rank_[at(earlier)];
  const auto swap_entries = [&] {
    std::swap(order[at(position)], order[at(position) + 1]);
    std::swap(device_position_[at(earlier)], device_position_[at(later)]);
  };
  swap_entries();
  if (!reorder_after_swap(earlier, later)) {
    swap_entries();
    return false;
  }
  first_affected = std::min(first_affected, lowest);
  return true;
}

bool Retimer::swap_adjacent(int device, int position) {
  std::int32_t first_affected = op_count();
  if (!exchange(device, position, first_affected))
    return false;
  retime_from(first_affected);
  return true;
}

bool Retimer::move(int device, int from, int to) { return move_block(device, from, 1, to); }

bool Retimer::move_block(int device, int start, int count, int new_start) {
  // Each op of the block in turn (the first when moving up, the last when moving down) goes by
  // a chain of adjacent exchanges; all re-timed once at the end. Times are not read in between,
  // and undone chains restore the orders the current times belong to.
  const int step = start < new_start ? 1 : -1;
  const auto lower_of_pair = [&](int position) { return step > 0 ? position : position - 1; };
  std::int32_t first_affected = op_count();
  // Takes the op a chain moved from `from` as far as `reached` back to `from`.
  const auto undo = [&](int from, int reached) {
    while (reached != from) {
      reached -= step;
      [[maybe_unused]] const bool restored =
          exchange(device, lower_of_pair(reached), first_affected);
      PPSIM_ASSERT(restored); // the orders it restores were acyclic
    }
  };
  const auto chain = [&](int from, int to) {
    for (int position = from; position != to; position += step) {
      if (!exchange(device, lower_of_pair(position), first_affected)) {
        undo(from, position);
        return false;
      }
    }
    return true;
  };
  const auto offset = [&](int k) { return step > 0 ? count - 1 - k : k; };
  for (int k = 0; k < count; ++k) {
    if (!chain(start + offset(k), new_start + offset(k))) {
      for (int done = k - 1; done >= 0; --done)
        undo(start + offset(done), new_start + offset(done));
      return false;
    }
  }
  if (first_affected < op_count())
    retime_from(first_affected);
  return true;
}

bool Retimer::reorder_after_swap(std::int32_t earlier, std::int32_t later) {
  // Pearce and Kelly, "A dynamic topological sort algorithm for directed acyclic graphs"
  // (JEA 2007): the new edge later -> earlier only disorders ranks [rank(earlier), rank(later)].
  // What `earlier` reaches there must follow what reaches `later`; if `earlier` reaches `later`
  // the orders have a cycle.
  const std::int32_t lowest = rank_[at(earlier)];
  const std::int32_t highest = rank_[at(later)];
  const auto search = [&](std::int32_t from, bool forward, std::vector<std::int32_t> &found) {
    const std::int32_t stamp = ++visit_stamp_;
    found.clear();
    stack_.assign(1, from);
    visit_mark_[at(from)] = stamp;
    const auto visit = [&](std::int32_t node) {
      const std::int32_t rank = rank_[at(node)];
      if (visit_mark_[at(node)] != stamp && rank >= lowest && rank <= highest) {
        visit_mark_[at(node)] = stamp;
        stack_.push_back(node);
      }
    };
    while (!stack_.empty()) {
      const std::int32_t node = stack_.back();
      stack_.pop_back();
      found.push_back(node);
      const auto &order = device_order_[at(graph_.device[at(node)])];
      const auto position = at(device_position_[at(node)]);
      if (forward) {
        for (std::int32_t k = graph_.output_offset[at(node)];
             k < graph_.output_offset[at(node) + 1]; ++k)
          visit(graph_.consumer[at(graph_.output_edges[at(k)])]);
        if (position + 1 < order.size())
          visit(order[position + 1]);
      } else {
        for (std::int32_t e = graph_.input_offset[at(node)];
             e < graph_.input_offset[at(node) + 1]; ++e)
          visit(graph_.producer[at(e)]);
        if (position > 0)
          visit(order[position - 1]);
      }
    }
  };
  search(earlier, true, forward_set_);
  if (visit_mark_[at(later)] == visit_stamp_)
    return false;
  search(later, false, backward_set_);

  const auto by_rank = [&](std::int32_t a, std::int32_t b) { return rank_[at(a)] < rank_[at(b)]; };
  std::sort(forward_set_.begin(), forward_set_.end(), by_rank);
  std::sort(backward_set_.begin(), backward_set_.end(), by_rank);
  slots_.clear();
  for (const std::int32_t node : backward_set_)
    slots_.push_back(rank_[at(node)]);
  for (const std::int32_t node : forward_set_)
    slots_.push_back(rank_[at(node)]);
  std::sort(slots_.begin(), slots_.end());
  std::size_t slot = 0;
  for (const auto *set : {&backward_set_, &forward_set_}) {
    for (const std::int32_t node : *set) {
      topological_[at(slots_[slot])] = node;
      rank_[at(node)] = slots_[slot++];
    }
  }
  return true;
}

std::int32_t Retimer::node_at(int device, int position) const {
  return device_order_[at(device)][at(position)];
}

Ticks Retimer::makespan() const {
  Ticks last{};
  for (const auto &order : device_order_)
    if (!order.empty())
      last = std::max(last, state_.end[at(order.back())]);
  return last;
}

Ticks Retimer::start(int device, int position) const {
  const std::int32_t node = node_at(device, position);
  return state_.end[at(node)] - graph_.duration[at(node)];
}

Ticks Retimer::end(int device, int position) const {
  return state_.end[at(node_at(device, position))];
}

std::span<const std::int32_t> Retimer::device_order(int device) const {
  return device_order_[at(device)];
}

Schedule Retimer::schedule() const {
  Schedule result;
  result.name = name_;
  for (const auto &order : device_order_) {
    auto &list = result.device_ops.emplace_back();
    for (const std::int32_t node : order)
      list.push_back(ops_[at(node)]);
  }
  return result;
}

} // namespace ppsim
