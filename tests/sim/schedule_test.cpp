// sim/schedule: op kinds, overlapped pairs and the textual form used in messages.
#include "sim/schedule.h"

#include <doctest/doctest.h>

#include <string>

using ppsim::describe;
using ppsim::Op;
using ppsim::OpKind;
using ppsim::OpRef;

TEST_CASE("op_kind_token names every kind") {
  CHECK(ppsim::op_kind_token(OpKind::forward) == "F");
  CHECK(ppsim::op_kind_token(OpKind::backward_input) == "B");
  CHECK(ppsim::op_kind_token(OpKind::backward_weight) == "W");
  CHECK(ppsim::op_kind_token(OpKind::backward_full) == "BW");
  CHECK(ppsim::op_kind_token(OpKind::recompute_forward) == "R");
  CHECK(ppsim::op_kind_token(OpKind::recompute_weight_inputs) == "RW");
  CHECK(ppsim::op_kind_token(OpKind::recompute_full_backward) == "RBW");
  CHECK(ppsim::op_kind_token(OpKind::overlapped) == "OV");
  CHECK(ppsim::op_kind_token(static_cast<OpKind>(ppsim::kOpKindCount)) == "?");
}

TEST_CASE("is_recompute is true for R, RW and RBW only") {
  for (int k = 0; k < ppsim::kOpKindCount; ++k) {
    const auto kind = static_cast<OpKind>(k);
    CAPTURE(ppsim::op_kind_token(kind));
    const bool expected = kind == OpKind::recompute_forward ||
                          kind == OpKind::recompute_weight_inputs ||
                          kind == OpKind::recompute_full_backward;
    CHECK(ppsim::is_recompute(kind) == expected);
  }
}

TEST_CASE("a plain op has one sub-op, itself") {
  const Op op = Op::make(OpKind::backward_input, 3, 5);
  CHECK(op.kind() == OpKind::backward_input);
  CHECK(op.sub_op_count() == 1);
  CHECK(op.sub_op(0) == OpRef{OpKind::backward_input, 3, 5});
  const Op recompute = Op::make(OpKind::recompute_forward, 1, 2, 3);
  CHECK(recompute.sub_op(0).level == 3);
}

TEST_CASE("an overlapped op runs its forward and its backward") {
  const Op op = Op::overlap({OpKind::forward, 0, 7}, {OpKind::backward_full, 7, 3});
  CHECK(op.kind() == OpKind::overlapped);
  CHECK(op.sub_op_count() == 2);
  CHECK(op.sub_op(0) == OpRef{OpKind::forward, 0, 7});
  CHECK(op.sub_op(1) == OpRef{OpKind::backward_full, 7, 3});
  CHECK(op.first == OpRef{OpKind::overlapped, 0, 7});
  CHECK(op != Op::overlap({OpKind::forward, 0, 7}, {OpKind::backward_input, 7, 3}));
}

TEST_CASE("describe prints the form of messages and reports") {
  CHECK(describe(Op::make(OpKind::forward, 2, 3)) == "F(2,3)");
  CHECK(describe(Op::make(OpKind::backward_full, 0, 1)) == "BW(0,1)");
  CHECK(describe(Op::make(OpKind::recompute_full_backward, 10, 12)) == "RBW(10,12)");
  CHECK(describe(Op::overlap({OpKind::forward, 0, 7}, {OpKind::backward_full, 7, 3})) ==
        "OV(F(0,7);BW(7,3))");
  CHECK(describe(Op::overlap({OpKind::forward, 1, 0}, {OpKind::backward_input, 2, 4})) ==
        "OV(F(1,0);B(2,4))");
  // A level shows after the kind; level 0 is the plain R.
  CHECK(describe(OpRef{OpKind::recompute_forward, 1, 4, 2}) == "R2(1,4)");
  CHECK(describe(OpRef{OpKind::recompute_forward, 1, 4, 0}) == "R(1,4)");
}

TEST_CASE("Schedule counts devices and entries, an OV being one entry") {
  ppsim::Schedule schedule;
  CHECK(schedule.device_count() == 0);
  CHECK(schedule.op_count() == 0);
  schedule.device_ops = {{Op::make(OpKind::forward, 0, 0), Op::make(OpKind::backward_full, 0, 0)},
                         {},
                         {Op::overlap({OpKind::forward, 1, 0}, {OpKind::backward_full, 1, 1})}};
  CHECK(schedule.device_count() == 3);
  CHECK(schedule.op_count() == 3);
}
