// Structural validation of docs/model.md, "Validation and exit codes": each rule has its exact
// message.
#include "sim/validate.h"

#include "base/error.h"
#include "test_support.h"

#include <doctest/doctest.h>

using namespace ppsim;

namespace {

Op f(int s, int j) { return Op::make(OpKind::forward, s, j); }
Op bw(int s, int j) { return Op::make(OpKind::backward_full, s, j); }
Op b(int s, int j) { return Op::make(OpKind::backward_input, s, j); }
Op w(int s, int j) { return Op::make(OpKind::backward_weight, s, j); }

std::string message(std::vector<std::vector<Op>> ops, const ScheduleOrigin &origin = {}) {
  const Scenario scenario =
      build_scenario(testing::uniform_input(2, 1, {1, 1}, {1, 1}, {0, 1}), find_schedule("1f1b"));
  try {
    validate_schedule(scenario, Schedule{"s", std::move(ops)}, origin);
  } catch (const Error &error) {
    return error.what();
  }
  return "valid";
}

} // namespace

TEST_CASE("a complete, well-ordered schedule validates") {
  CHECK(message({{f(0, 0), bw(0, 0)}, {f(1, 0), bw(1, 0)}}) == "valid");
  CHECK(message({{f(0, 0), b(0, 0), w(0, 0)}, {f(1, 0), bw(1, 0)}}) == "valid");
}

TEST_CASE("each violated rule names device, position and op") {
  CHECK(message({{f(0, 0), bw(0, 0)}}) ==
        "schedule 's': has 1 device rows but the scenario has p = 2");
  CHECK(message({{f(1, 0), bw(0, 0)}, {f(0, 0), bw(1, 0)}}) ==
        "schedule 's': device 0, position 0, op F(1,0): stage 1 is placed on device 1");
  CHECK(message({{f(0, 0), bw(0, 3)}, {f(1, 0), bw(1, 0)}}) ==
        "schedule 's': device 0, position 1, op BW(0,3): microbatch 3 is outside 0..0");
  CHECK(message({{f(0, 0), f(0, 0), bw(0, 0)}, {f(1, 0), bw(1, 0)}}) ==
        "schedule 's': op F(0,0) appears more than once");
  CHECK(message({{bw(0, 0)}, {f(1, 0), bw(1, 0)}}) ==
        "schedule 's': device 0 is missing op F(0,0)");
  CHECK(message({{f(0, 0)}, {f(1, 0), bw(1, 0)}}) == "schedule 's': device 0 is missing op B(0,0)");
  CHECK(message({{f(0, 0), b(0, 0), bw(0, 0)}, {f(1, 0), bw(1, 0)}}) ==
        "schedule 's': device 0: (0,0) has both a full BW and a split B/W");
  CHECK(message({{bw(0, 0), f(0, 0)}, {f(1, 0), bw(1, 0)}}) ==
        "schedule 's': device 0: BW(0,0) comes before F(0,0)");
  CHECK(message({{f(0, 0), w(0, 0), b(0, 0)}, {f(1, 0), bw(1, 0)}}) ==
        "schedule 's': device 0: W(0,0) comes before B(0,0)");
  CHECK(message({{f(0, 0), Op::make(OpKind::recompute_forward, 0, 0), bw(0, 0),
                  Op::make(OpKind::recompute_forward, 0, 0)},
                 {f(1, 0), bw(1, 0)}}) == "schedule 's': op R(0,0) appears more than once");
  CHECK(message({{f(0, 0), bw(0, 0), Op::make(OpKind::recompute_forward, 0, 0)},
                 {f(1, 0), bw(1, 0)}}) == "schedule 's': device 0: BW(0,0) comes before R(0,0)");
  CHECK(message({{f(0, 0), bw(0, 0), Op::make(OpKind::recompute_full_backward, 0, 0)},
                 {f(1, 0), bw(1, 0)}}) ==
        "schedule 's': device 0: RBW(0,0) needs a split backward");
  CHECK(message({{f(0, 0), Op{OpRef{OpKind::overlapped, 0, 0}, OpRef{OpKind::forward, 0, 0}}},
                 {f(1, 0), bw(1, 0)}}) ==
        "schedule 's': device 0, position 1, op OV(F(0,0);F(0,0)): an overlapped op pairs a "
        "forward with a B or BW");
}

TEST_CASE("imported schedules report the file and the row's line") {
  CHECK(message({{bw(0, 0), f(0, 0)}, {f(1, 0), bw(1, 0)}}, ScheduleOrigin{"my.csv", 1}) ==
        "my.csv:1: device 0: BW(0,0) comes before F(0,0)");
}
