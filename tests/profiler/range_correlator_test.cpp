// NVTX range -> external id mapping used by the injection library.
#include "profiler/range_correlator.h"

#include <doctest/doctest.h>

namespace ppsim::profiler {

TEST_CASE("phase ranges push ids, other ranges nest without ids") {
  RangeCorrelator correlator;
  CHECK_FALSE(correlator.push("forward_step").has_value());
  const auto forward = correlator.push("3/F/1");
  REQUIRE(forward.has_value());
  CHECK(unpack_phase_id(*forward) == PhaseId{Pass::forward, 3, 1, 0});
  CHECK_FALSE(correlator.push("aten::linear").has_value());
  CHECK(correlator.depth() == 3);
  CHECK_FALSE(correlator.pop()); // aten::linear
  CHECK(correlator.pop());       // 3/F/1
  CHECK_FALSE(correlator.pop()); // forward_step
  CHECK_FALSE(correlator.pop()); // unbalanced: ignored
  CHECK(correlator.depth() == 0);
}

TEST_CASE("repeated ranges of one phase count repetitions") {
  RangeCorrelator correlator;
  for (std::uint16_t rep = 0; rep < 3; ++rep) {
    const auto id = correlator.push("L02.W.mb0");
    REQUIRE(id.has_value());
    CHECK(unpack_phase_id(*id)->repetition == rep);
    correlator.pop();
  }
  const auto other = correlator.push("2/W/1"); // another microbatch starts at 0
  REQUIRE(other.has_value());
  CHECK(unpack_phase_id(*other)->repetition == 0);
}

} // namespace ppsim::profiler
