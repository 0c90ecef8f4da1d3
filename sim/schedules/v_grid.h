#pragma once
// The slot grid shared by the V-shape generators (docs/schedules.md, "v-auto"): one row per device,
// one column per unit slot, each cell empty or one of six pass letters; its ASAP timing (the
// "squeeze") and the conversion to a timed schedule. Internal to sim/schedules.
#include "base/index.h"
#include "sim/scenario.h"
#include "sim/schedules/greedy.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace ppsim::schedules::detail {

/// Letters of the grid (docs/schedules.md, "v-min and v-half"): F = Fa, f = Fb, B = Bb, b = Ba, W =
/// W(b), w = W(a).
enum Letter : std::int8_t { kEmpty = -1, kF = 0, kf = 1, kB = 2, kb = 3, kW = 4, kw = 5 };
constexpr int kLetters = 6;

inline bool is_forward(int letter) { return letter == kF || letter == kf; }
inline bool is_weight(int letter) { return letter == kW || letter == kw; }
/// F, B, W flow to higher devices and are scanned ascending; f, b, w descending.
inline bool flows_down(int letter) { return letter % 2 == 0; }

/// p rows of cells; a cell holds a letter or kEmpty.
struct Grid {
  int rows = 0;
  int width = 0;
  std::vector<std::int8_t> cells;

  Grid(int p, int columns);
  std::int8_t &at(int i, int j) { return cells[index(i, j)]; }
  [[nodiscard]] std::int8_t at(int i, int j) const { return cells[index(i, j)]; }
  [[nodiscard]] std::size_t index(int i, int j) const {
    return ppsim::at(i) * ppsim::at(width) + ppsim::at(j);
  }
  /// Widens (or narrows) every row, keeping the cells that fit.
  void resize(int columns);
};

/// Per device and letter: duration, and latency of the letter's cross-device input.
struct LetterCosts {
  std::vector<std::array<std::int64_t, kLetters>> duration;
  std::vector<std::array<std::int64_t, kLetters>> latency;
};

/// Unit durations and no latency: the slot time used while building orders.
LetterCosts unit_letter_costs(int p);
/// The scenario's per-stage costs and boundary latencies (V placement, v = 2).
LetterCosts scenario_letter_costs(const Scenario &scenario);

/// Start and end of every cell (grid layout, -1 for empty cells) and each device's last end.
struct Timing {
  std::vector<std::int64_t> start;
  std::vector<std::int64_t> end;
  std::vector<std::int64_t> device_free;
};

/// ASAP timing of the grid's order: columns left to right, in each column F, B, W devices
/// ascending then f, b, w descending; a pass starts after its device's previous pass and the
/// same letter and microbatch on the device it flows from (at the turns, the preceding letter
/// on this device). False when such a dependency is not yet placed or F/f/B/b occurs more than
/// `m` times on a row.
bool time_grid(const Grid &grid, int m, const LetterCosts &costs, Timing &timing);

/// The squeeze: the grid re-laid at its unit-time ASAP columns (order preserved), or nullopt
/// when time_grid fails.
std::optional<Grid> squeeze(const Grid &grid, int m);

/// The schedule of a grid (each row's passes in column order, W's numbered in order) with its
/// ASAP end times under the scenario's costs.
TimedSchedule timed_schedule(const Scenario &scenario, const Grid &grid, int m);

} // namespace ppsim::schedules::detail
