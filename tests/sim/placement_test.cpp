// sim/placement: pi(s) for each placement kind (docs/model.md, "Placements").
#include "sim/placement.h"

#include "base/assert.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

using ppsim::make_placement;
using ppsim::PlacementKind;
using V = std::vector<int>;

TEST_CASE("single wave: stage s on device s, chunks ignored") {
  CHECK(make_placement(PlacementKind::single_wave, 4, 1) == V{0, 1, 2, 3});
  CHECK(make_placement(PlacementKind::single_wave, 4, 3) == V{0, 1, 2, 3});
  CHECK(make_placement(PlacementKind::single_wave, 1, 1) == V{0});
}

TEST_CASE("round robin: v p stages, stage s on s mod p") {
  CHECK(make_placement(PlacementKind::round_robin, 3, 2) == V{0, 1, 2, 0, 1, 2});
  CHECK(make_placement(PlacementKind::round_robin, 2, 3) == V{0, 1, 0, 1, 0, 1});
  CHECK(make_placement(PlacementKind::round_robin, 4, 1) == V{0, 1, 2, 3});
}

TEST_CASE("V shape: down then back up, repeated per pair of chunks") {
  CHECK(make_placement(PlacementKind::v_shape, 3, 2) == V{0, 1, 2, 2, 1, 0});
  CHECK(make_placement(PlacementKind::v_shape, 2, 4) == V{0, 1, 1, 0, 0, 1, 1, 0});
  CHECK(make_placement(PlacementKind::v_shape, 1, 2) == V{0, 0});
  // Every device holds v stages.
  const V placement = make_placement(PlacementKind::v_shape, 4, 6);
  REQUIRE(placement.size() == 24);
  for (int g = 0; g < 4; ++g)
    CHECK(std::count(placement.begin(), placement.end(), g) == 6);
}

TEST_CASE("dual pipe: pipe 0 on 0..p-1, pipe 1 on p-1..0, whatever the chunks") {
  CHECK(make_placement(PlacementKind::dual_pipe, 3, 1) == V{0, 1, 2, 2, 1, 0});
  CHECK(make_placement(PlacementKind::dual_pipe, 4, 2) == V{0, 1, 2, 3, 3, 2, 1, 0});
}

TEST_CASE("make_placement asserts at least one device and one chunk") {
  CHECK_THROWS_AS(make_placement(PlacementKind::single_wave, 0, 1), ppsim::InternalError);
  CHECK_THROWS_AS(make_placement(PlacementKind::round_robin, 2, 0), ppsim::InternalError);
}
