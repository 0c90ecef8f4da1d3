// The steps of v-auto's building-block search (docs/schedules.md, "v-auto") on hand-made grids.
#include "sim/schedules/v_auto_steps.h"

#include "base/index.h"

#include <doctest/doctest.h>

#include <array>
#include <string>
#include <vector>

using namespace ppsim::schedules::detail;

namespace {

// A grid from rows of letters: F f B b W w, '.' for an empty cell.
Grid grid_of(const std::vector<std::string> &rows) {
  Grid grid(static_cast<int>(rows.size()), static_cast<int>(rows.front().size()));
  const std::string letters = "FfBbWw";
  for (int i = 0; i < grid.rows; ++i) {
    for (int j = 0; j < grid.width; ++j) {
      const char cell = rows[ppsim::at(i)][ppsim::at(j)];
      grid.at(i, j) = static_cast<std::int8_t>(cell == '.' ? int{kEmpty}
                                                           : static_cast<int>(letters.find(cell)));
    }
  }
  return grid;
}

} // namespace

TEST_CASE("row peaks count forwards held until their W frees them") {
  const Grid grid = grid_of({"FfBbWw..", "FFfBWb.w"});
  CHECK(row_peaks(grid) == std::vector<int>{2, 3});
  CHECK(max_peak(grid) == 3);
}

TEST_CASE("fill_w puts W(b) and W(a) at the first free slot after B and b, cyclically") {
  std::array<int, kLetters> block{0, 1, 2, 3, -1, -1}; // F f B b at slots 0-3
  fill_w(block);
  CHECK(block[kW] == 4);
  CHECK(block[kw] == 5);
  std::array<int, kLetters> wrapped{0, 1,  5,
                                    4, -1, -1}; // after B at 5: slots 0 and 1 taken, then 2
  fill_w(wrapped);
  CHECK(wrapped[kW] == 2);
  CHECK(wrapped[kw] == 3);
}

TEST_CASE(
    "building_block shifts each device's F and B by k and f and b by -1, or reports a collision") {
  std::array<int, kLetters> first{0, 1, 2, 3, -1, -1};
  fill_w(first);
  const auto block = building_block(first, 3, 3, 1, 2); // first = F0 f1 B2 b3 W4 w5
  REQUIRE(block.has_value());
  REQUIRE(block->size() == 2);
  CHECK((*block)[1] == std::array<int, kLetters>{3, 0, 5, 2, 1, 4});
  CHECK_FALSE(building_block(first, 2, 2, 1, 2).has_value()); // F and b both land on slot 2
}

TEST_CASE("remove_redundancy keeps the first m of every letter and max_bubble measures the rows") {
  Grid grid = grid_of({"FFFBBB", ".FFBBB"});
  remove_redundancy(grid, 2);
  CHECK(grid.at(0, 2) == kEmpty);
  CHECK(grid.at(0, 5) == kEmpty);
  CHECK(grid.at(1, 3) == kB);
  CHECK(grid.at(1, 5) == kEmpty);
  // Row 0: last pass at column 4, 4 passes: 5 - 4 - 0 = 1; row 1: 5 - 4 - 1 = 0.
  CHECK(max_bubble(grid) == 1);
}
