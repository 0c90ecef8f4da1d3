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

TEST_CASE("past the repetition cap a range yields no id, so a long run keeps bounded state") {
  RangeCorrelator correlator(2);
  for (int repetition = 0; repetition < 2; ++repetition) {
    const auto id = correlator.push("3/B/0");
    REQUIRE(id.has_value());
    CHECK(unpack_phase_id(*id)->repetition == repetition);
    CHECK(correlator.pop());
  }
  CHECK_FALSE(correlator.push("3/B/0").has_value());
  CHECK_FALSE(correlator.pop());               // nothing was pushed for it
  CHECK(correlator.push("3/B/1").has_value()); // another microbatch has its own count
}

} // namespace ppsim::profiler
