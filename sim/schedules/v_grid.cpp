// The V-shape slot grid and its ASAP timing (docs/schedules.md, "v-auto", the "squeeze" of
// arXiv 2405.15362 section 3; sail-sg v_auto_schedule.py squeeze_without_change_order and
// zbv_greedy.py eager_execution_time, which time the same order the same way).
#include "sim/schedules/v_grid.h"
#include "base/index.h"

#include "base/assert.h"
#include "sim/schedules/op_lists.h"

#include <algorithm>

namespace ppsim::schedules::detail {
namespace {

/// The stage a letter of device i works on: F, b, w on a = i; f, B, W on b = 2p-1-i.
int letter_stage(int letter, int device, int p) {
  return (letter == kF || letter == kb || letter == kw) ? device : 2 * p - 1 - device;
}

} // namespace

Grid::Grid(int p, int columns)
    : rows(p), width(columns), cells(ppsim::at(p) * ppsim::at(columns), kEmpty) {}

void Grid::resize(int columns) {
  Grid wider(rows, columns);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < std::min(width, columns); ++j)
      wider.at(i, j) = at(i, j);
  }
  *this = std::move(wider);
}

LetterCosts unit_letter_costs(int p) {
  LetterCosts costs;
  costs.duration.assign(ppsim::at(p), {1, 1, 1, 1, 1, 1});
  costs.latency.assign(ppsim::at(p), {0, 0, 0, 0, 0, 0});
  return costs;
}

LetterCosts scenario_letter_costs(const Scenario &scenario) {
  const int p = scenario.devices;
  LetterCosts costs = unit_letter_costs(p);
  auto boundary = [&](int s) {
    return s >= 0 && s + 1 < scenario.stage_count()
               ? scenario.boundary_transfer[ppsim::at(s)].count()
               : 0;
  };
  for (int i = 0; i < p; ++i) {
    for (int letter = 0; letter < kLetters; ++letter) {
      const int s = letter_stage(letter, i, p);
      // The engine's durations, the runtime's overhead per action included.
      const OpKind kind = is_forward(letter)  ? OpKind::forward
                          : is_weight(letter) ? OpKind::backward_weight
                                              : OpKind::backward_input;
      costs.duration[ppsim::at(i)][ppsim::at(letter)] =
          op_duration(scenario, Op::make(kind, s, 0)).count();
    }
    const int a = i, b = 2 * p - 1 - i;
    // F from a-1, f from b-1, B from b+1 (boundary b), b from a+1 (boundary a).
    costs.latency[ppsim::at(i)] = {
        boundary(a - 1), boundary(b - 1), boundary(b), boundary(a), 0, 0};
  }
  return costs;
}

bool time_grid(const Grid &grid, int m, const LetterCosts &costs, Timing &timing) {
  const int p = grid.rows;
  timing.start.assign(grid.cells.size(), -1);
  timing.end.assign(grid.cells.size(), -1);
  timing.device_free.assign(ppsim::at(p), 0);
  std::vector<int> count(ppsim::at(p) * kLetters, 0);
  // end_of[(letter * m + mb) * p + i]
  std::vector<std::int64_t> end_of(ppsim::at(kLetters) * ppsim::at(m) * ppsim::at(p), -1);
  auto key = [&](int letter, int mb, int i) {
    return (ppsim::at(letter) * ppsim::at(m) + ppsim::at(mb)) * ppsim::at(p) + ppsim::at(i);
  };
  for (int j = 0; j < grid.width; ++j) {
    for (int direction = 0; direction < 2; ++direction) {
      for (int step = 0; step < p; ++step) {
        const int i = direction == 0 ? step : p - 1 - step;
        const int letter = grid.at(i, j);
        if (letter == kEmpty || flows_down(letter) != (direction == 0))
          continue;
        int &k = count[ppsim::at(i) * kLetters + ppsim::at(letter)];
        // W's only follow their device's order; they are numbered but not looked up.
        const bool weight = is_weight(letter);
        if (!weight && k >= m)
          return false;
        std::int64_t ready = timing.device_free[ppsim::at(i)];
        int from = -1, turn = -1;
        if (letter == kF || letter == kB) {
          if (i > 0)
            from = i - 1;
          else if (letter == kB)
            turn = kf;
        } else if (letter == kf || letter == kb) {
          if (i + 1 < p)
            from = i + 1;
          else
            turn = letter - 1;
        }
        if (from >= 0) {
          const std::int64_t dependency = end_of[key(letter, k, from)];
          if (dependency < 0)
            return false;
          ready = std::max(ready, dependency + costs.latency[ppsim::at(i)][ppsim::at(letter)]);
        }
        if (turn >= 0) {
          const std::int64_t dependency = end_of[key(turn, k, i)];
          if (dependency < 0)
            return false;
          ready = std::max(ready, dependency);
        }
        const std::int64_t finish = ready + costs.duration[ppsim::at(i)][ppsim::at(letter)];
        const std::size_t cell = ppsim::at(i) * ppsim::at(grid.width) + ppsim::at(j);
        timing.start[cell] = ready;
        timing.end[cell] = finish;
        if (!weight)
          end_of[key(letter, k, i)] = finish;
        timing.device_free[ppsim::at(i)] = finish;
        ++k;
      }
    }
  }
  return true;
}

/// Squeeze: re-lay the grid at its unit-time ASAP columns (order preserved).
std::optional<Grid> squeeze(const Grid &grid, int m) {
  Timing timing;
  if (!time_grid(grid, m, unit_letter_costs(grid.rows), timing))
    return std::nullopt;
  const std::int64_t width =
      *std::max_element(timing.device_free.begin(), timing.device_free.end());
  Grid squeezed(grid.rows, static_cast<int>(width));
  for (int i = 0; i < grid.rows; ++i) {
    for (int j = 0; j < grid.width; ++j) {
      const std::int64_t start = timing.start[ppsim::at(i) * ppsim::at(grid.width) + ppsim::at(j)];
      if (start >= 0)
        squeezed.at(i, static_cast<int>(start)) = grid.at(i, j);
    }
  }
  return squeezed;
}

TimedSchedule timed_schedule(const Scenario &scenario, const Grid &grid, int m) {
  constexpr std::array<OpKind, kLetters> kinds{OpKind::forward,         OpKind::forward,
                                               OpKind::backward_input,  OpKind::backward_input,
                                               OpKind::backward_weight, OpKind::backward_weight};
  Timing timing;
  const bool valid = time_grid(grid, m, scenario_letter_costs(scenario), timing);
  PPSIM_ASSERT(valid);
  TimedSchedule timed;
  timed.schedule = empty_schedule(scenario);
  timed.end.resize(ppsim::at(grid.rows));
  for (int i = 0; i < grid.rows; ++i) {
    std::array<int, kLetters> seen{};
    for (int j = 0; j < grid.width; ++j) {
      const int letter = grid.at(i, j);
      if (letter == kEmpty)
        continue;
      const int mb = seen[ppsim::at(letter)]++;
      timed.schedule.device_ops[ppsim::at(i)].push_back(
          Op::make(kinds[ppsim::at(letter)], letter_stage(letter, i, grid.rows), mb));
      timed.end[ppsim::at(i)].push_back(Ticks{timing.end[grid.index(i, j)]});
    }
  }
  return timed;
}

} // namespace ppsim::schedules::detail
