// The V slot grid's ASAP timing and squeeze (docs/schedules.md, "v-auto"), on hand-made grids.
#include "base/index.h"
#include "sim/schedules/v_grid.h"

#include <doctest/doctest.h>

using namespace ppsim::schedules::detail;

namespace {

/// A grid from one string per device ("F" = Fa, "f" = Fb, ..., ' ' empty).
Grid grid_of(const std::vector<std::string> &rows) {
  Grid grid(static_cast<int>(rows.size()), static_cast<int>(rows[0].size()));
  const std::string letters = "FfBbWw";
  for (int i = 0; i < grid.rows; ++i) {
    for (int j = 0; j < grid.width; ++j) {
      const char c = rows[ppsim::at(i)][ppsim::at(j)];
      if (c != ' ')
        grid.at(i, j) = static_cast<std::int8_t>(letters.find(c));
    }
  }
  return grid;
}

std::vector<std::string> rows_of(const Grid &grid) {
  std::vector<std::string> rows;
  for (int i = 0; i < grid.rows; ++i) {
    std::string row;
    for (int j = 0; j < grid.width; ++j)
      row += grid.at(i, j) == kEmpty ? ' ' : "FfBbWw"[grid.at(i, j)];
    rows.push_back(row);
  }
  return rows;
}

} // namespace

TEST_CASE("squeeze moves every pass to its unit-time ASAP column, order kept") {
  // p = 2, one microbatch: F(0) F(1) f(1) f(0) B(0) B(1) b(1) b(0), W after each B.
  const Grid spread = grid_of({"F     f  B W     bw", "  F f     B  bW  w "});
  const auto squeezed = squeeze(spread, 1);
  REQUIRE(squeezed.has_value());
  // F0 0, F1 1, f1 2, f0 3, B0 4, W0 5, B1 5, b1 6, W1 7, b0 7, w 8 on both devices.
  CHECK(rows_of(*squeezed) == std::vector<std::string>{"F  fBW bw", " Ff  BbWw"});
}

TEST_CASE("time_grid rejects a pass whose input comes later and a letter beyond m") {
  Timing timing;
  // Device 1's F runs before device 0's F of the same microbatch.
  CHECK_FALSE(time_grid(grid_of({" F", "F "}), 1, unit_letter_costs(2), timing));
  // Two F's on device 0 with m = 1.
  CHECK_FALSE(time_grid(grid_of({"FF"}), 1, unit_letter_costs(1), timing));
  // Costs and latency: F takes 3, the hop to device 1 costs 2, so device 1 starts at 5.
  LetterCosts costs = unit_letter_costs(2);
  costs.duration[0][kF] = 3;
  costs.latency[1][kF] = 2;
  REQUIRE(time_grid(grid_of({"F ", " F"}), 1, costs, timing));
  CHECK(timing.start[1 * 2 + 1] == 5);
  CHECK(timing.end[1 * 2 + 1] == 6);
}
