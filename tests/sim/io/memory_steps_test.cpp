// memory_steps: the engine's start/end memory points reduced to a step function.
#include "sim/io/memory_steps.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <utility>
#include <vector>

using namespace ppsim;

namespace {

std::vector<std::pair<std::int64_t, double>> pairs(const std::vector<MemoryPoint> &points) {
  std::vector<std::pair<std::int64_t, double>> result;
  for (const MemoryPoint &point : points)
    result.emplace_back(point.time.count(), point.resident);
  return result;
}

} // namespace

TEST_CASE("memory_steps keeps the last point of a time and drops unchanged values") {
  // Initial point, an op [0, 2) holding 1, a back-to-back op [2, 3) holding 2, a release at 3,
  // then an op [5, 6) whose allocation is zero (a W with nothing to free).
  const std::vector<MemoryPoint> timeline{
      {Ticks{0}, 0}, {Ticks{0}, 1}, {Ticks{2}, 1}, {Ticks{2}, 2},
      {Ticks{3}, 0}, {Ticks{5}, 0}, {Ticks{6}, 0},
  };
  CHECK(pairs(memory_steps(timeline)) ==
        std::vector<std::pair<std::int64_t, double>>{{0, 1}, {2, 2}, {3, 0}});
}

TEST_CASE("memory_steps: a value that returns to the previous step at the same time vanishes") {
  // An op ends at 4 releasing 1 and the next allocates 1 at 4: the resident amount never changes.
  const std::vector<MemoryPoint> timeline{{Ticks{0}, 3}, {Ticks{4}, 2}, {Ticks{4}, 3}};
  CHECK(pairs(memory_steps(timeline)) == std::vector<std::pair<std::int64_t, double>>{{0, 3}});
  CHECK(memory_steps({}).empty());
}
