// DualPipeV and DualPipe (docs/schedules.md, "dualpipe and dualpipev"; oracle O-16, README closed
// forms, O-19 errors).
#include "base/error.h"
#include "base/index.h"
#include "sim/schedules/families.h"
#include "tests/sim/schedules/oracle_support.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

using namespace ppsim;
using namespace ppsim::testing;

namespace {

/// One PyTorch action "<stage><F|I|B|W><mb>" in ppsim terms (I = B, B = BW; docs/model.md, "Foreign
/// vocabularies").
OpRef torch_action(const std::string &text) {
  const std::size_t letter = text.find_first_of("FIBW");
  const int stage = std::stoi(text.substr(0, letter));
  const int microbatch = std::stoi(text.substr(letter + 1));
  switch (text[letter]) {
  case 'F':
    return {OpKind::forward, stage, microbatch};
  case 'I':
    return {OpKind::backward_input, stage, microbatch};
  case 'B':
    return {OpKind::backward_full, stage, microbatch};
  default:
    return {OpKind::backward_weight, stage, microbatch};
  }
}

/// A comma-separated PyTorch row, with "(a;b)OVERLAP_F_B" as an overlapped pair.
std::vector<Op> torch_row(const std::string &row) {
  std::vector<Op> ops;
  std::stringstream cells(row);
  std::string cell;
  while (std::getline(cells, cell, ',')) {
    if (cell.front() == '(') {
      const std::size_t semicolon = cell.find(';');
      const std::size_t close = cell.find(')');
      ops.push_back(Op::overlap(torch_action(cell.substr(1, semicolon - 1)),
                                torch_action(cell.substr(semicolon + 1, close - semicolon - 1))));
    } else {
      ops.push_back(Op{torch_action(cell), {}});
    }
  }
  return ops;
}

ppsim::ScenarioInput with_overlap(int p, int m, ppsim::Rational overlap) {
  auto input = uniform_input(p, m, {1, 1}, {1, 1}, {1, 1});
  input.overlap_fb = overlap;
  return input;
}

} // namespace

TEST_CASE("O-16 PyTorch DualPipeV device-0 row, p=4 m=10") {
  const std::vector<Op> expected = torch_row(
      "0F0,0F1,0F2,0F3,0F4,0F5,0F6,7F0,7I0,7W0,7F1,7I1,7W1,7F2,7I2,7W2,7F3,(0F7;7B3)OVERLAP_F_B,"
      "(7F4;0B0)OVERLAP_F_B,(0F8;7B4)OVERLAP_F_B,(7F5;0B1)OVERLAP_F_B,(0F9;7B5)OVERLAP_F_B,"
      "(7F6;0B2)OVERLAP_F_B,7B6,(7F7;0B3)OVERLAP_F_B,7B7,(7F8;0B4)OVERLAP_F_B,7B8,"
      "(7F9;0B5)OVERLAP_F_B,7B9,0I6,0W6,0I7,0W7,0I8,0W8,0I9,0W9");
  REQUIRE(expected.size() == 38);
  const auto run = run_schedule("dualpipev", uniform_input(4, 10, {1, 1}, {1, 1}, {1, 1}));
  CHECK(run.schedule.device_ops[0] == expected);
}

TEST_CASE("DualPipeV README bubble (PP/2-1)(F&B + B - 3W) equals max(makespan - busy)") {
  // Per-chunk F = B_in = W = 1, README B (full backward) = 2, PP = 2p stages, so the bubble is
  // (p-1)(F&B - 1) (docs/schedules.md, "dualpipe and dualpipev"). Checked for max(F, B+W) <= F&B <=
  // F+B+W: an OV op shorter than a lone BW (F&B = 1 or 3/2 here) shifts the critical path and the
  // formula fails; one longer than F+B+W (no overlap gain at all) too.
  for (int p = 2; p <= 4; ++p) {
    for (int m = 2 * p; m <= 4 * p; ++m) {
      for (const ppsim::Rational overlap : {ppsim::Rational{2, 1}, {5, 2}, {3, 1}}) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(overlap.numerator);
        const auto run = run_schedule("dualpipev", with_overlap(p, m, overlap));
        const ppsim::Rational bubble{(p - 1) * (overlap.numerator - overlap.denominator),
                                     overlap.denominator};
        CHECK(ppsim::testing::max_makespan_minus_busy(run) == ppsim::testing::ticks(run, bubble));
        // README activation per device: PP + 1 chunks.
        CHECK(chunk_peaks(run) == std::vector<double>(ppsim::at(p), 2 * p + 1));
      }
    }
  }
}

TEST_CASE("DualPipe README bubble (PP/2-1)(F&B + B - 3W) equals max(makespan - busy)") {
  // PP = p devices, two pipes of p stages, m total microbatches (m/2 per pipe); same range of
  // F&B as for DualPipeV.
  for (const int p : {2, 4, 6, 8}) {
    for (int m = 2 * p; m <= 4 * p; m += 2) {
      for (const ppsim::Rational overlap : {ppsim::Rational{2, 1}, {5, 2}, {3, 1}}) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(overlap.numerator);
        const auto run = run_schedule("dualpipe", with_overlap(p, m, overlap));
        const ppsim::Rational bubble{(p / 2 - 1) * (overlap.numerator - overlap.denominator),
                                     overlap.denominator};
        CHECK(ppsim::testing::max_makespan_minus_busy(run) == ppsim::testing::ticks(run, bubble));
        CHECK(chunk_peaks(run) == std::vector<double>(ppsim::at(p), p + 1));
      }
    }
  }
}

TEST_CASE("DualPipe places phase 0 on its own side's pipe and phase 1 on the other") {
  // p = 4: device 1 (h = 1) runs pipe 0 stage 1 (global 1) and pipe 1 stage 2 (global 6);
  // device 2 (h = 1) runs pipe 1 stage 1 (global 5) and pipe 0 stage 2 (global 2).
  const auto run = run_schedule("dualpipe", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  CHECK(run.schedule.device_ops[1].front() == Op::make(OpKind::forward, 1, 0));
  CHECK(run.schedule.device_ops[2].front() == Op::make(OpKind::forward, 5, 0));
  bool runs_six = false;
  for (const Op &op : run.schedule.device_ops[1])
    runs_six = runs_six || op.first.stage == 6;
  CHECK(runs_six);
}

TEST_CASE("O-19 DualPipe and DualPipeV constraints") {
  CHECK_THROWS_WITH_AS(run_schedule("dualpipev", uniform_input(4, 7, {1, 1}, {1, 1}, {1, 1})),
                       "schedule 'dualpipev' needs m >= 2p = 8 microbatches (the number of "
                       "stages), got m = 7",
                       ppsim::Error);
  CHECK_THROWS_WITH_AS(
      run_schedule("dualpipev", uniform_input(4, 16, {1, 1}, {1, 1}, {1, 1}, {0, 1}, 4)),
      "schedule 'dualpipev' needs exactly 2 stages per device (v = 2), got v = 4", ppsim::Error);
  CHECK_THROWS_WITH_AS(run_schedule("dualpipe", uniform_input(3, 12, {1, 1}, {1, 1}, {1, 1})),
                       "schedule 'dualpipe' needs an even number of devices, got p = 3",
                       ppsim::Error);
  CHECK_THROWS_WITH_AS(run_schedule("dualpipe", uniform_input(4, 6, {1, 1}, {1, 1}, {1, 1})),
                       "schedule 'dualpipe' needs m >= 2p = 8 microbatches in total, got m = 6",
                       ppsim::Error);
  CHECK_THROWS_AS(run_schedule("dualpipe", uniform_input(4, 9, {1, 1}, {1, 1}, {1, 1})),
                  ppsim::Error); // odd m: the scenario builder cannot split it over two pipes
  // Called directly on a one-pipe scenario (the registry always builds two pipes).
  const ppsim::Scenario one_pipe = ppsim::build_scenario(
      uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}), ppsim::find_schedule("dualpipev"));
  CHECK_THROWS_WITH_AS(ppsim::schedules::dualpipe(one_pipe, {}),
                       "schedule 'dualpipe' needs the two-pipe placement", ppsim::Error);
}
