// V-Min and V-Half (docs/schedules.md, "v-min and v-half"): controllable-memory stable patterns on
// the V placement, squeezed and reordered without raising the peak. Source:
// sail-sg/zero-bubble-pipeline-parallelism, megatron/core/pipeline_parallel/zerobubble/
// scheduler/zbv_greedy.py ("implementation of vhalf and vmin schedules of PPCM"); arXiv 2405.15362
// sections 3-4.
#include "base/assert.h"
#include "base/error.h"
#include "base/index.h"
#include "sim/memory.h"
#include "sim/schedules/families.h"
#include "sim/schedules/greedy.h"
#include "sim/schedules/slot_peak.h"
#include "sim/schedules/v_grid.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>

namespace ppsim::schedules {
namespace {

/// Pass types of device i with the grid letters of docs/schedules.md: 0 Fa [F], 1 Fb [f], 2 Bb [B],
/// 3 Ba [b], 4 W(b) [W], 5 W(a) [w]. While W's are "shared" (one list, index 4), the k-th W
/// belongs to the k-th B or b of the device in slot order.
enum Type : int { kFa = 0, kFb = 1, kBb = 2, kBa = 3, kWb = 4, kWa = 5 };

/// slots[type][microbatch] of one device; 4 lists (no W), 5 (shared W) or 6 (split W).
using DeviceSlots = std::vector<std::vector<std::int64_t>>;
using Slots = std::vector<DeviceSlots>;
using detail::SlotPeak;
using detail::SlotUse;

std::int64_t last_slot(const DeviceSlots &device) {
  std::int64_t last = 0;
  for (const auto &list : device) {
    if (!list.empty())
      last = std::max(last, list.back());
  }
  return last;
}

/// Step 2, place_w: a pending W goes to every free slot (W(b) first when split); the rest
/// follow the last slot.
void place_w(DeviceSlots &device, bool split) {
  PPSIM_ASSERT(device.size() == 4);
  const std::int64_t bound = last_slot(device);
  std::vector<int> occupant(ppsim::at(bound) + 1, -1);
  for (int type = 0; type < 4; ++type) {
    for (const std::int64_t slot : device[ppsim::at(type)])
      occupant[ppsim::at(slot)] = type;
  }
  device.resize(split ? 6 : 5);
  std::array<int, 2> pending{0, 0};
  for (std::int64_t t = 0; t <= bound; ++t) {
    const int type = occupant[ppsim::at(t)];
    if (type == kBb || type == kBa) {
      ++pending[split ? ppsim::at(type - kBb) : 0];
    } else if (type < 0) {
      for (std::size_t w = 0; w < 2; ++w) {
        if (pending[w] > 0) {
          device[kWb + w].push_back(t);
          --pending[w];
          break;
        }
      }
    }
  }
  std::int64_t next = bound + 1;
  for (std::size_t w = 0; w < 2; ++w) {
    for (; pending[w] > 0; --pending[w])
      device[kWb + w].push_back(next++);
  }
}

/// Step 3: the device's slots for its peak of F minus W; without W lists every free slot
/// releases one pending B/b (a greedy W placement).
SlotPeak device_peak(const DeviceSlots &device) {
  const bool has_w = device.size() > 4;
  std::vector<SlotUse> uses(ppsim::at(last_slot(device)) + 1, SlotUse::free);
  for (std::size_t type = 0; type < device.size(); ++type) {
    const SlotUse use = type <= kFb ? SlotUse::forward
                        : type <= kBa ? SlotUse::backward
                                      : SlotUse::weight;
    for (const std::int64_t slot : device[type])
      uses[ppsim::at(slot)] = use;
  }
  return SlotPeak(std::move(uses), !has_w);
}

/// The k-th (from 0) smallest of two ascending lists holding more than k values together.
std::int64_t kth_smallest(const std::vector<std::int64_t> &a, const std::vector<std::int64_t> &b,
                          std::size_t k) {
  // Take `from_a` values from a and k + 1 - from_a from b; the least from_a where a's next is not
  // below b's last taken.
  std::size_t lo = k + 1 > b.size() ? k + 1 - b.size() : 0;
  std::size_t hi = std::min(k + 1, a.size());
  while (lo < hi) {
    const std::size_t from_a = (lo + hi) / 2;
    const std::size_t from_b = k + 1 - from_a;
    if (from_b > 0 && a[from_a] < b[from_b - 1])
      lo = from_a + 1;
    else
      hi = from_a;
  }
  const std::size_t from_b = k + 1 - lo;
  if (lo == 0)
    return b[from_b - 1];
  if (from_b == 0)
    return a[lo - 1];
  return std::max(a[lo - 1], b[from_b - 1]);
}

/// One pass, for ordering by (slot, device, type, microbatch) as the reference does.
struct Pass {
  std::int64_t slot;
  int device, type, microbatch;
};

/// A counting sort by slot: the passes are listed in (device, type, microbatch) order and spread
/// stably, in O(passes + slots).
std::vector<Pass> passes_in_slot_order(const Slots &slots) {
  std::int64_t width = 0;
  for (const DeviceSlots &device : slots)
    width = std::max(width, last_slot(device) + 1);
  std::vector<std::size_t> first(ppsim::at(width) + 1, 0);
  for (const DeviceSlots &device : slots) {
    for (const auto &list : device) {
      for (const std::int64_t slot : list)
        ++first[ppsim::at(slot) + 1];
    }
  }
  std::partial_sum(first.begin(), first.end(), first.begin());
  std::vector<Pass> passes(first.back());
  for (std::size_t i = 0; i < slots.size(); ++i) {
    for (std::size_t type = 0; type < slots[i].size(); ++type) {
      for (std::size_t mb = 0; mb < slots[i][type].size(); ++mb) {
        const std::int64_t slot = slots[i][type][mb];
        passes[first[ppsim::at(slot)]++] = {slot, static_cast<int>(i), static_cast<int>(type),
                                            static_cast<int>(mb)};
      }
    }
  }
  return passes;
}

/// The slots as a grid (shared W's are letter W), for the squeeze of v_grid.h.
detail::Grid to_grid(const Slots &slots) {
  std::int64_t width = 0;
  for (const DeviceSlots &device : slots)
    width = std::max(width, last_slot(device) + 1);
  detail::Grid grid(static_cast<int>(slots.size()), static_cast<int>(width));
  for (std::size_t i = 0; i < slots.size(); ++i) {
    for (std::size_t type = 0; type < slots[i].size(); ++type) {
      for (const std::int64_t slot : slots[i][type])
        grid.at(static_cast<int>(i), static_cast<int>(slot)) = static_cast<std::int8_t>(type);
    }
  }
  return grid;
}

/// Re-times the slots with unit costs and c = 0 (ASAP, "squeeze"): start times are the new slots.
Slots squeeze(const Slots &slots, int m) {
  const std::optional<detail::Grid> grid = detail::squeeze(to_grid(slots), m);
  PPSIM_ASSERT(grid.has_value());
  Slots squeezed(slots.size());
  for (int i = 0; i < grid->rows; ++i) {
    DeviceSlots &device = squeezed[ppsim::at(i)];
    device.resize(slots[ppsim::at(i)].size());
    for (int j = 0; j < grid->width; ++j) {
      if (grid->at(i, j) != detail::kEmpty)
        device[ppsim::at(grid->at(i, j))].push_back(j);
    }
  }
  return squeezed;
}

/// Step 4: move each pass outside the stable phase to the earliest free slot that keeps the
/// device peak within the current max peak, then re-time with unit costs.
Slots reorder(Slots slots, bool consider_w) {
  if (consider_w) {
    for (DeviceSlots &device : slots)
      place_w(device, false);
  }
  std::vector<SlotPeak> peaks;
  int cap = 0;
  for (const DeviceSlots &device : slots) {
    peaks.push_back(device_peak(device));
    cap = std::max(cap, peaks.back().peak());
  }
  const int m = static_cast<int>(slots[0][kFa].size());
  std::vector<std::vector<char>> occupied;
  for (const DeviceSlots &device : slots)
    occupied.emplace_back(ppsim::at(last_slot(device)) + 1, 0);
  int phase = 0;
  for (const Pass &pass : passes_in_slot_order(slots)) {
    DeviceSlots &device = slots[ppsim::at(pass.device)];
    std::int64_t &slot = device[ppsim::at(pass.type)][ppsim::at(pass.microbatch)];
    if (pass.type == kBa && pass.device == 0 && phase == 0)
      phase = 1;
    const bool keep = phase == 1 || (phase == 0 && !consider_w);
    if (phase == 1 && pass.type == kFa && pass.microbatch == m - 1)
      phase = 2;
    if (!keep) {
      std::int64_t lo = -1;
      auto at = [&](int i, int type, int mb) {
        return slots[ppsim::at(i)][ppsim::at(type)][ppsim::at(mb)];
      };
      if ((pass.type == kFa || pass.type == kBb) && pass.device > 0)
        lo = std::max(lo, at(pass.device - 1, pass.type, pass.microbatch));
      if ((pass.type == kFb || pass.type == kBa) &&
          pass.device + 1 < static_cast<int>(slots.size())) {
        lo = std::max(lo, at(pass.device + 1, pass.type, pass.microbatch));
      }
      if (pass.type > kFa && pass.type < kWb)
        lo = std::max(lo, at(pass.device, pass.type - 1, pass.microbatch));
      if (pass.type == kWb)
        lo = std::max(lo, kth_smallest(device[kBb], device[kBa], ppsim::at(pass.microbatch)));
      if (pass.microbatch > 0)
        lo = std::max(lo, at(pass.device, pass.type, pass.microbatch - 1));
      SlotPeak &peak = peaks[ppsim::at(pass.device)];
      for (std::int64_t t = lo + 1; t < slot; ++t) {
        if (occupied[ppsim::at(pass.device)][ppsim::at(t)])
          continue;
        peak.move(slot, t);
        if (!over_cap(peak.peak(), cap)) {
          slot = t;
          break;
        }
        peak.move(t, slot);
      }
    }
    occupied[ppsim::at(pass.device)][ppsim::at(slot)] = 1;
  }
  if (!consider_w) {
    for (DeviceSlots &device : slots)
      place_w(device, false);
  }
  return squeeze(slots, m);
}

/// Step 1: slot of microbatch 0 of types 0..3 on device i; microbatch j adds 6j.
std::array<int, 4> stable_pattern(VPattern pattern, int p, int i) {
  if (pattern == VPattern::min) {
    const int d = p % 3 == 0 ? 2 : 0;
    return {i, 2 * p - 1 - i, 2 * p + d + i, 4 * p + d - 1 - i};
  }
  const int d = p % 2 == 0 ? 3 : 0;
  return {2 * i, 3 * p - i - 2, 3 * p + d + 2 * i - 1, 6 * p + d - i - 2};
}

DeviceSlots without_w(DeviceSlots device) {
  device.resize(4);
  return device;
}

const char *pattern_name(VPattern pattern) { return pattern == VPattern::min ? "v-min" : "v-half"; }

} // namespace

TimedSchedule v_family_timed(const Scenario &scenario, VPattern pattern) {
  enforce(two_chunks_refusal(pattern_name(pattern), scenario));
  const int p = scenario.devices;
  const int m = scenario.microbatches;
  Slots slots(ppsim::at(p));
  for (int i = 0; i < p; ++i) {
    const std::array<int, 4> first = stable_pattern(pattern, p, i);
    for (const int slot : first) {
      std::vector<std::int64_t> list;
      for (int j = 0; j < m; ++j)
        list.push_back(slot + 6 * j);
      slots[ppsim::at(i)].push_back(std::move(list));
    }
  }
  // Step 5: reorder with W's, drop them, reorder again, then split the W's per chunk.
  Slots r1 = reorder(slots, true);
  for (DeviceSlots &device : r1)
    device = without_w(std::move(device));
  Slots r2 = reorder(r1, false);
  for (DeviceSlots &device : r2) {
    device = without_w(std::move(device));
    place_w(device, true);
  }
  // Step 6: the device order is the slot order; time it with the real costs.
  return detail::timed_schedule(scenario, to_grid(r2), m);
}

std::optional<Error> v_min_precondition(const Scenario &scenario,
                                        const GeneratorOptions & /*options*/) {
  return two_chunks_refusal(pattern_name(VPattern::min), scenario);
}

std::optional<Error> v_half_precondition(const Scenario &scenario,
                                         const GeneratorOptions & /*options*/) {
  return two_chunks_refusal(pattern_name(VPattern::half), scenario);
}

Schedule v_min(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  return v_family_timed(scenario, VPattern::min).schedule;
}

Schedule v_half(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  return v_family_timed(scenario, VPattern::half).schedule;
}

// V-Half holds about half of 1F1B's activations: (stages + 2) / 2 on every stage (PPCM).
int v_half_in_flight(int stages, int /*stage*/) { return (stages + 2) / 2; }

} // namespace ppsim::schedules
