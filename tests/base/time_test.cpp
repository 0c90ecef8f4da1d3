#include "base/time.h"

#include <doctest/doctest.h>

#include <vector>

using ppsim::Rational;
using ppsim::Ticks;

TEST_CASE("scale_for makes every duration a whole number of ticks") {
  // A full-stage cost of 1 over v = 6 chunks is 1/6 per chunk (docs/model.md, "Time").
  const std::vector<Rational> values{{1, 6}, {1, 4}, {3, 1}};
  const ppsim::TimeScale scale = ppsim::scale_for(values.data(), values.size());
  CHECK(scale.exact);
  CHECK(scale.ticks_per_unit == 12);
  CHECK(scale.to_ticks({1, 6}) == Ticks{2});
  Ticks six_chunks{};
  for (int i = 0; i < 6; ++i) six_chunks += scale.to_ticks({1, 6});
  CHECK(six_chunks == scale.to_ticks({1, 1}));
}

TEST_CASE("format prints exact decimals, else nine significant digits") {
  const std::vector<Rational> values{{1, 6}, {1, 4}};
  const ppsim::TimeScale scale = ppsim::scale_for(values.data(), values.size());
  CHECK(scale.format(scale.to_ticks({33, 1})) == "33");
  CHECK(scale.format(scale.to_ticks({57, 2})) == "28.5");
  CHECK(scale.format(scale.to_ticks({1, 4})) == "0.25");
  CHECK(scale.format(scale.to_ticks({1, 6})) == "0.166666667");
}

TEST_CASE("an overflowing scale falls back to a flagged inexact scale") {
  std::vector<Rational> values;
  for (std::int64_t prime : {1000003, 1000033, 1000037}) values.push_back({1, prime});
  const ppsim::TimeScale scale = ppsim::scale_for(values.data(), values.size());
  CHECK_FALSE(scale.exact);
  CHECK(scale.to_units(scale.to_ticks({1, 1000003})) == doctest::Approx(1.0 / 1000003).epsilon(1e-9));
}

TEST_CASE("rational arithmetic is exact and normalized") {
  CHECK(Rational{1, 2} + Rational{1, 3} == Rational{5, 6});
  CHECK(Rational{2, 3} * Rational{3, 4} == Rational{1, 2});
  CHECK(Rational{1, 2} / 3 == Rational{1, 6});
  CHECK(Rational{1, 3} < Rational{1, 2});
}
