// 1F1B and 1F1B-split (docs/schedules.md): exact op orders, the warm-up clamp, the closed
// forms against simulated makespans, and the in-flight count.
#include "base/index.h"
#include "sim/schedules/families.h"
#include "tests/sim/schedules/oracle_support.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace ppsim;
using namespace ppsim::testing;

namespace {

struct Case {
  int p, m;
  ppsim::Rational f, b, w;
};

const std::vector<Case> &grid() {
  static const std::vector<Case> cases{
      {4, 8, {1, 1}, {1, 1}, {1, 1}}, {3, 4, {1, 1}, {2, 1}, {1, 1}},
      {2, 6, {1, 2}, {1, 1}, {1, 1}}, {4, 2, {1, 1}, {1, 1}, {1, 1}},
      {5, 1, {1, 1}, {1, 1}, {1, 1}}, {1, 3, {1, 1}, {2, 1}, {3, 1}},
      {4, 4, {1, 1}, {1, 1}, {1, 1}}, {3, 7, {3, 2}, {5, 2}, {1, 1}}};
  return cases;
}

} // namespace

TEST_CASE("1F1B p=3 m=4: p-1-r warm-up forwards, then F/BW pairs, then the drain") {
  const auto generated = generate("1f1b", uniform_input(3, 4, {1, 1}, {1, 1}, {1, 1}));
  CHECK(orders(generated.schedule) ==
        std::vector<std::string>{"F(0,0) F(0,1) F(0,2) BW(0,0) F(0,3) BW(0,1) BW(0,2) BW(0,3)",
                                 "F(1,0) F(1,1) BW(1,0) F(1,2) BW(1,1) F(1,3) BW(1,2) BW(1,3)",
                                 "F(2,0) BW(2,0) F(2,1) BW(2,1) F(2,2) BW(2,2) F(2,3) BW(2,3)"});
}

TEST_CASE("1F1B clamps the warm-up to m when m < p") {
  const auto one = generate("1f1b", uniform_input(3, 1, {1, 1}, {1, 1}, {1, 1}));
  CHECK(orders(one.schedule) ==
        std::vector<std::string>{"F(0,0) BW(0,0)", "F(1,0) BW(1,0)", "F(2,0) BW(2,0)"});
  const auto two = generate("1f1b", uniform_input(4, 2, {1, 1}, {1, 1}, {1, 1}));
  CHECK(orders(two.schedule) ==
        std::vector<std::string>{"F(0,0) F(0,1) BW(0,0) BW(0,1)", "F(1,0) F(1,1) BW(1,0) BW(1,1)",
                                 "F(2,0) F(2,1) BW(2,0) BW(2,1)", "F(3,0) BW(3,0) F(3,1) BW(3,1)"});
}

TEST_CASE("1F1B-split is the 1F1B order with each BW as B then W") {
  const auto split = generate("1f1b-split", uniform_input(2, 3, {1, 1}, {1, 1}, {1, 1}));
  CHECK(orders(split.schedule) ==
        std::vector<std::string>{"F(0,0) F(0,1) B(0,0) W(0,0) F(0,2) B(0,1) W(0,1) B(0,2) W(0,2)",
                                 "F(1,0) B(1,0) W(1,0) F(1,1) B(1,1) W(1,1) F(1,2) B(1,2) W(1,2)"});
  CHECK(split.schedule.name == "1f1b-split");
}

TEST_CASE("one_f_one_b_closed_form (m+p-1)(F+B+W) equals the simulated makespan without latency") {
  for (const Case &k : grid())
    check_closed_form("1f1b", ppsim::schedules::one_f_one_b_closed_form, k.p, k.m, k.f, k.b, k.w);
}

TEST_CASE("one_f_one_b_split_closed_form m(F+B+W) + (p-1)(F+B) equals the simulated makespan") {
  for (const Case &k : grid())
    check_closed_form("1f1b-split", ppsim::schedules::one_f_one_b_split_closed_form, k.p, k.m, k.f,
                      k.b, k.w);
}

TEST_CASE("the 1F1B closed forms give values by formula and none with latency") {
  const Ticks one{1};
  CHECK(ppsim::schedules::one_f_one_b_closed_form(
            uniform_costs(4, 8, 1, one, one, one, Ticks{0})) == Ticks{33});
  CHECK(ppsim::schedules::one_f_one_b_split_closed_form(
            uniform_costs(4, 8, 1, one, one, one, Ticks{0})) == Ticks{30});
  CHECK(ppsim::schedules::one_f_one_b_split_closed_form(
            uniform_costs(4, 8, 1, one, Ticks{2}, Ticks{3}, Ticks{0})) == Ticks{8 * 6 + 3 * 3});
  CHECK_FALSE(
      ppsim::schedules::one_f_one_b_closed_form(uniform_costs(4, 8, 1, one, one, one, Ticks{1}))
          .has_value());
  CHECK_FALSE(ppsim::schedules::one_f_one_b_split_closed_form(
                  uniform_costs(4, 8, 1, one, one, one, Ticks{1}))
                  .has_value());
}

TEST_CASE("one_f_one_b_in_flight is the warm-up plus one, the simulated peak when m >= p") {
  CHECK(ppsim::schedules::one_f_one_b_in_flight(4, 0) == 4);
  CHECK(ppsim::schedules::one_f_one_b_in_flight(4, 3) == 1);
  for (const char *name : {"1f1b", "1f1b-split"}) {
    CAPTURE(name);
    const auto run = run_schedule(name, uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
    for (int r = 0; r < 4; ++r) {
      CAPTURE(r);
      CHECK(run.simulation.metrics.devices[ppsim::at(r)].peak_activations ==
            ppsim::schedules::one_f_one_b_in_flight(4, r));
    }
  }
}
