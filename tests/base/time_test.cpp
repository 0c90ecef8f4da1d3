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
  for (int i = 0; i < 6; ++i)
    six_chunks += scale.to_ticks({1, 6});
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
  for (std::int64_t prime : {1000003, 1000033, 1000037})
    values.push_back({1, prime});
  const ppsim::TimeScale scale = ppsim::scale_for(values.data(), values.size());
  CHECK_FALSE(scale.exact);
  CHECK(scale.to_units(scale.to_ticks({1, 1000003})) ==
        doctest::Approx(1.0 / 1000003).epsilon(1e-9));
}

TEST_CASE("rational arithmetic is exact and normalized") {
  CHECK(Rational{1, 2} + Rational{1, 3} == Rational{5, 6});
  CHECK(Rational{2, 3} * Rational{3, 4} == Rational{1, 2});
  CHECK(Rational{1, 2} / 3 == Rational{1, 6});
  CHECK(Rational{1, 3} < Rational{1, 2});
}

TEST_CASE("values past 2^53 ticks print exactly, never through a double") {
  // --F 1e15 on a 1/10 scale: 11000000000000022.8 is not a double (docs/model.md, "Time").
  const ppsim::TimeScale tenths{10, true};
  const Ticks big{110000000000000228};
  CHECK(tenths.format(big) == "11000000000000022.8");
  CHECK(tenths.json(big) == "11000000000000022.8");
  CHECK(tenths.readable(big) == "11000000000000023");
  CHECK(tenths.readable(Ticks{110000000000000225}) == "11000000000000023"); // half away from zero
  CHECK(tenths.format(Ticks{-110000000000000228}) == "-11000000000000022.8");
  // --F 1e-12 --B 1e4: 80008.000000000008 on a 10^12 scale.
  const ppsim::TimeScale fine{1000000000000, true};
  const Ticks ideal{80008000000000008};
  CHECK(fine.format(ideal) == "80008.000000000008");
  CHECK(fine.json(ideal) == "80008.000000000008");
  CHECK(fine.readable(ideal) == "80008");
  // Every digit of a finite decimal, however many (2^-40 has 40).
  const ppsim::TimeScale binary{std::int64_t{1} << 40, true};
  CHECK(binary.format(Ticks{1}) == "0.0000000000009094947017729282379150390625");
  // No finite decimal: 9 (17 in JSON) significant digits, never fewer than the integer part.
  const ppsim::TimeScale thirds{3, true};
  CHECK(thirds.format(Ticks{1}) == "0.333333333");
  CHECK(thirds.format(Ticks{30000000000000002}) == "10000000000000001"); // 17 integer digits, exact
  CHECK(thirds.json(Ticks{30000000000000002}) == "10000000000000001");
  CHECK(thirds.json(Ticks{300000000000000001}) == "100000000000000000");
  CHECK(thirds.format(Ticks{3000000001}) == "1000000000");
  CHECK(thirds.json(Ticks{2}) == "0.6666666666666666");
}
