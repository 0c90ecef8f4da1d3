// GPipe / AFAB (docs/schedules.md): exact op orders and the closed form against the engine.
#include "sim/schedules/families.h"
#include "tests/sim/schedules/oracle_support.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace ppsim;
using namespace ppsim::testing;

TEST_CASE("GPipe p=2 m=3: all forwards, then all backwards in microbatch order") {
  const auto generated = generate("gpipe", uniform_input(2, 3, {1, 1}, {1, 1}, {1, 1}));
  CHECK(orders(generated.schedule) ==
        std::vector<std::string>{"F(0,0) F(0,1) F(0,2) BW(0,0) BW(0,1) BW(0,2)",
                                 "F(1,0) F(1,1) F(1,2) BW(1,0) BW(1,1) BW(1,2)"});
  CHECK(generated.schedule.name == "gpipe");
}

TEST_CASE(
    "GPipe with two chunks per device: forwards chunk up, backwards chunk down, per microbatch") {
  // Round-robin placement, p=2 v=2: device 0 holds stages 0 and 2, device 1 stages 1 and 3.
  const auto generated = generate("gpipe", uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}, {0, 1}, 2));
  CHECK(orders(generated.schedule) ==
        std::vector<std::string>{"F(0,0) F(2,0) F(0,1) F(2,1) BW(2,0) BW(0,0) BW(2,1) BW(0,1)",
                                 "F(1,0) F(3,0) F(1,1) F(3,1) BW(3,0) BW(1,0) BW(3,1) BW(1,1)"});
}

TEST_CASE("GPipe on one device is F then BW per microbatch, no bubble") {
  const auto run = run_schedule("gpipe", uniform_input(1, 3, {1, 1}, {2, 1}, {3, 1}));
  CHECK(run.units(run.simulation.metrics.makespan) == 18);
  CHECK(run.simulation.metrics.bubble_ratio == 0);
}

TEST_CASE("gpipe_closed_form (m+p-1)(F+B+W) + 2(p-1)c equals the simulated makespan") {
  struct Case {
    int p, m;
    ppsim::Rational f, b, w, c;
  };
  const std::vector<Case> cases{
      {4, 8, {1, 1}, {1, 1}, {1, 1}, {0, 1}}, {4, 8, {1, 1}, {1, 1}, {1, 1}, {1, 2}},
      {3, 2, {1, 1}, {2, 1}, {1, 1}, {0, 1}}, {2, 5, {3, 2}, {5, 2}, {1, 2}, {1, 4}},
      {5, 1, {1, 1}, {1, 1}, {0, 1}, {1, 1}}, {1, 4, {1, 1}, {2, 1}, {1, 1}, {7, 1}},
      {6, 3, {2, 1}, {1, 1}, {1, 3}, {1, 3}}};
  for (const Case &k : cases)
    check_closed_form("gpipe", ppsim::schedules::gpipe_closed_form, k.p, k.m, k.f, k.b, k.w, k.c);
}

TEST_CASE("gpipe_closed_form holds for one chunk per device only") {
  const Ticks one{1};
  CHECK(ppsim::schedules::gpipe_closed_form(uniform_costs(4, 8, 1, one, one, one, Ticks{0})) ==
        Ticks{33});
  CHECK(ppsim::schedules::gpipe_closed_form(uniform_costs(4, 8, 1, one, one, one, Ticks{2})) ==
        Ticks{45});
  CHECK_FALSE(ppsim::schedules::gpipe_closed_form(uniform_costs(4, 8, 2, one, one, one, Ticks{0}))
                  .has_value());
}
