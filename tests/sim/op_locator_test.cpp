// sim/op_locator: (kind, stage, microbatch) -> schedule entry, entries numbered device by device.
#include "base/index.h"
#include "sim/op_locator.h"

#include "base/assert.h"

#include <doctest/doctest.h>

#include <vector>

using ppsim::Op;
using ppsim::OpKind;
using ppsim::OpLocator;
using ppsim::OpRef;
using ppsim::Schedule;

namespace {

Op make(OpKind kind, int stage, int microbatch) { return Op::make(kind, stage, microbatch); }

} // namespace

TEST_CASE("OpLocator numbers entries device by device and maps both halves of an OV") {
  Schedule schedule;
  schedule.device_ops = {{make(OpKind::forward, 0, 0), make(OpKind::forward, 0, 1),
                          make(OpKind::backward_full, 0, 0), make(OpKind::backward_full, 0, 1)},
                         {make(OpKind::forward, 1, 0),
                          Op::overlap({OpKind::forward, 1, 1}, {OpKind::backward_full, 1, 0}),
                          make(OpKind::backward_full, 1, 1)}};
  const OpLocator locator(schedule, 2, 2);
  CHECK(locator.entry_count() == 7);
  CHECK(locator.entry_offset(0) == 0);
  CHECK(locator.entry_offset(1) == 4);
  CHECK(locator.entry_offset(2) == 7);
  CHECK(locator.find({OpKind::forward, 0, 0}) == 0);
  CHECK(locator.find({OpKind::forward, 0, 1}) == 1);
  CHECK(locator.find({OpKind::backward_full, 0, 0}) == 2);
  CHECK(locator.find({OpKind::backward_full, 0, 1}) == 3);
  CHECK(locator.find({OpKind::forward, 1, 0}) == 4);
  CHECK(locator.find({OpKind::forward, 1, 1}) == 5);       // the OV's forward
  CHECK(locator.find({OpKind::backward_full, 1, 0}) == 5); // the OV's backward
  CHECK(locator.find({OpKind::backward_full, 1, 1}) == 6);
  const std::vector<int> devices{0, 0, 0, 0, 1, 1, 1};
  for (std::int32_t entry = 0; entry < 7; ++entry) {
    CAPTURE(entry);
    CHECK(locator.device_of(entry) == devices[ppsim::at(entry)]);
  }
  CHECK(locator.duplicates().empty());
}

TEST_CASE("OpLocator::find answers kAbsent for kinds, ids and ranges the schedule lacks") {
  Schedule schedule;
  schedule.device_ops = {{make(OpKind::forward, 0, 0), make(OpKind::backward_input, 0, 0)},
                         {Op::overlap({OpKind::forward, 1, 0}, {OpKind::backward_input, 1, 0})}};
  const OpLocator locator(schedule, 2, 3);
  CHECK(locator.find({OpKind::backward_input, 0, 0}) == 1);
  CHECK(locator.find({OpKind::backward_input, 1, 0}) == 2);
  // A kind with no table, a kind with a table but not this op, the OV kind itself.
  CHECK(locator.find({OpKind::backward_weight, 0, 0}) == OpLocator::kAbsent);
  CHECK(locator.find({OpKind::forward, 0, 2}) == OpLocator::kAbsent);
  CHECK(locator.find({OpKind::overlapped, 1, 0}) == OpLocator::kAbsent);
  // Out of range on every side.
  CHECK(locator.find({OpKind::forward, -1, 0}) == OpLocator::kAbsent);
  CHECK(locator.find({OpKind::forward, 2, 0}) == OpLocator::kAbsent);
  CHECK(locator.find({OpKind::forward, 0, -1}) == OpLocator::kAbsent);
  CHECK(locator.find({OpKind::forward, 0, 3}) == OpLocator::kAbsent);
  CHECK(locator.contains(OpKind::forward, 1, 0));
  CHECK_FALSE(locator.contains(OpKind::forward, 1, 1));
}

TEST_CASE("OpLocator ignores an R's level and locates it as (R, stage, microbatch)") {
  Schedule schedule;
  schedule.device_ops = {{make(OpKind::forward, 0, 0), Op::make(OpKind::recompute_forward, 0, 0, 2),
                          make(OpKind::backward_full, 0, 0)}};
  const OpLocator locator(schedule, 1, 1);
  CHECK(locator.find({OpKind::recompute_forward, 0, 0}) == 1);
  CHECK(locator.find({OpKind::recompute_forward, 0, 0, 2}) == 1);
}

TEST_CASE("OpLocator keeps the first of duplicates and reports only the first duplicate") {
  Schedule schedule;
  schedule.device_ops = {{make(OpKind::forward, 0, 0), make(OpKind::forward, 0, 0)},
                         {make(OpKind::backward_full, 0, 0), make(OpKind::backward_full, 0, 0),
                          make(OpKind::forward, 0, 0)}};
  const OpLocator locator(schedule, 1, 1);
  CHECK(locator.find({OpKind::forward, 0, 0}) == 0);
  CHECK(locator.find({OpKind::backward_full, 0, 0}) == 2);
  REQUIRE(locator.duplicates().size() == 1);
  CHECK(locator.duplicates().front() == OpRef{OpKind::forward, 0, 0});
  CHECK(locator.entry_count() == 5);
}

TEST_CASE("OpLocator handles devices without ops") {
  Schedule schedule;
  schedule.device_ops = {{}, {make(OpKind::forward, 0, 0)}, {}};
  const OpLocator locator(schedule, 1, 1);
  CHECK(locator.entry_offset(0) == 0);
  CHECK(locator.entry_offset(1) == 0);
  CHECK(locator.entry_offset(2) == 1);
  CHECK(locator.entry_offset(3) == 1);
  CHECK(locator.entry_count() == 1);
  CHECK(locator.device_of(0) == 1);
}

TEST_CASE("OpLocator asserts ids are in range (validate_schedule reports them first)") {
  Schedule stage_out;
  stage_out.device_ops = {{make(OpKind::forward, 2, 0)}};
  CHECK_THROWS_AS(OpLocator(stage_out, 2, 1), ppsim::InternalError);
  Schedule microbatch_out;
  microbatch_out.device_ops = {{make(OpKind::forward, 0, -1)}};
  CHECK_THROWS_AS(OpLocator(microbatch_out, 2, 1), ppsim::InternalError);
}
