// Attribution by external correlation (docs/profiler.md, "How measurement works" and "Testing
// without a GPU"), on synthetic activity decoded from buffers, so the join sees exactly what the
// collector would hand it.
#include "profiler/attribution.h"

#include "activity_fixtures.h"
#include "profiler/decoder.h"

#include <doctest/doctest.h>

namespace ppsim::profiler {
namespace {

constexpr PhaseId kForward{Pass::forward, 3, 0, 7};
constexpr PhaseId kBackward{Pass::backward_input, 3, 0, 7};

void decode(testing::ActivityBuffer &buffer, DecodedActivity &into) {
  decode_buffer(buffer.data(), buffer.size(), &next_record_by_size, into);
}

// CUPTI keeps one stack of external ids per kind and links each API call to the top of it.
struct FakeCorrelationStack {
  std::vector<std::uint64_t> stack;
  std::uint32_t next_correlation = 1;

  std::uint32_t launch(testing::ActivityBuffer &buffer) {
    const std::uint32_t correlation = next_correlation++;
    buffer.api(correlation);
    if (!stack.empty())
      buffer.link(correlation, stack.back());
    return correlation;
  }
};

const PhaseMetrics *find(const Attribution &attribution, PhaseId id) {
  for (const PhaseMetrics &phase : attribution.phases) {
    if (phase.phase == id)
      return &phase;
  }
  return nullptr;
}

} // namespace

TEST_CASE(
    "external ids pack (schema, pass, layer, microbatch, repetition) as docs/profiler.md says") {
  const PhaseId phase{Pass::backward_weight, 0x1234, 0x0056, 0x0789};
  CHECK(pack_phase_id(phase) == 0x0103123400560789ULL);
  CHECK(unpack_phase_id(0x0103123400560789ULL) == phase);
  CHECK_FALSE(unpack_phase_id(0x0203123400560789ULL).has_value()); // another schema
  CHECK_FALSE(unpack_phase_id(0x0107000000000000ULL).has_value()); // no pass 7
  CHECK_FALSE(unpack_phase_id(42).has_value());                    // a foreign id
}

TEST_CASE("NVTX range names round trip in both spellings") {
  CHECK(nvtx_range_name({Pass::backward_input, 3, 0, 9}) == "L03.B.mb0");
  CHECK(nvtx_range_name({Pass::recompute_selective, 12, 4, 0}) == "L12.RS.mb4");
  CHECK(parse_range_name("L03.B.mb0") == PhaseId{Pass::backward_input, 3, 0, 0});
  CHECK(parse_range_name("3/BW/2") == PhaseId{Pass::backward_total, 3, 2, 0});
  CHECK_FALSE(parse_range_name("L03.X.mb0").has_value());
  CHECK_FALSE(parse_range_name("3/B").has_value());
  CHECK_FALSE(parse_range_name("optimizer").has_value());
  CHECK_FALSE(parse_range_name("L3.B.0").has_value());
}

TEST_CASE("union length of intervals") {
  CHECK(union_length_ns({}) == 0);
  CHECK(union_length_ns({{10, 20}, {15, 30}, {40, 50}, {41, 45}}) == 30);
  CHECK(union_length_ns({{5, 5}, {7, 6}}) == 0);
}

TEST_CASE("kernels on two streams overlap: busy is the union, kernel_sum the sum") {
  DecodedActivity activity;
  testing::ActivityBuffer buffer;
  buffer.link(1, pack_phase_id(kForward)).link(2, pack_phase_id(kForward));
  buffer.kernel(1, 100, 200, "gemm", 7).kernel(2, 150, 260, "softmax", 8).kernel(1, 300, 310);
  decode(buffer, activity);
  const Attribution attribution = attribute(activity);
  REQUIRE(attribution.phases.size() == 1);
  const PhaseMetrics &phase = attribution.phases[0];
  CHECK(phase.phase == kForward);
  CHECK(phase.n_kernels == 3);
  CHECK(phase.kernel_sum_ns == 100 + 110 + 10);
  CHECK(phase.busy_union_ns == 160 + 10);
  CHECK(phase.span_ns == 210);
}

TEST_CASE("an NCCL kernel launched inside a layer's range is communication, not layer time") {
  DecodedActivity activity;
  testing::ActivityBuffer buffer;
  buffer.link(1, pack_phase_id(kForward)).link(2, pack_phase_id(kForward));
  buffer.kernel(1, 100, 200, "gemm", 7).kernel(2, 150, 450, "ncclDevKernel_SendRecv", 9);
  decode(buffer, activity);
  const Attribution attribution = attribute(activity);
  REQUIRE(attribution.phases.size() == 1);
  CHECK(attribution.phases[0].busy_union_ns == 100);
  CHECK(attribution.phases[0].n_kernels == 1);
  CHECK(attribution.communication_kernels == 1);
  CHECK(attribution.communication_busy_ns == 300);
  CHECK(attribution.unattributed_activities == 0);
  CHECK(is_communication_kernel("ncclKernel_AllGather_RING_LL_Sum_bf16"));
  CHECK_FALSE(is_communication_kernel("sm90_xmma_gemm"));
}

TEST_CASE("a phase with memcpy and memset counts their time and bytes") {
  DecodedActivity activity;
  testing::ActivityBuffer buffer;
  buffer.link(4, pack_phase_id(kBackward))
      .memcpy_record(4, 0 + 10, 30, 1000)
      .memset_record(4, 30, 35, 24);
  buffer.kernel(4, 40, 50);
  decode(buffer, activity);
  const Attribution attribution = attribute(activity);
  REQUIRE(attribution.phases.size() == 1);
  CHECK(attribution.phases[0].copy_bytes == 1024);
  CHECK(attribution.phases[0].n_kernels == 1);
  CHECK(attribution.phases[0].busy_union_ns == 20 + 5 + 10);
}

TEST_CASE("fed batch by batch: a kernel waits for a link in a later batch; past the bound it is "
          "unattributed") {
  IncrementalAttribution attribution(2);
  DecodedActivity first, second, third;
  testing::ActivityBuffer a, b, c;
  a.kernel(1, 100, 150, "gemm").kernel(2, 200, 260, "gemm");
  decode(a, first);
  attribution.add(first); // both wait
  b.link(1, pack_phase_id(kForward)).kernel(3, 300, 310, "gemm");
  decode(b, second);
  attribution.add(second); // 1 placed; 2 and 3 wait
  c.kernel(4, 400, 420, "gemm");
  decode(c, third);
  attribution.add(third); // three would wait: the oldest (2) gives up
  const Attribution result = attribution.finish();
  REQUIRE(result.phases.size() == 1);
  CHECK(result.phases[0].busy_union_ns == 50);
  CHECK(result.unattributed_activities == 3);
  CHECK(result.unattributed_busy_ns == 60 + 10 + 20);
}

TEST_CASE(
    "allocation records join their phase by correlation id, net of releases, links in any order") {
  // F (correlation 1-3) launches a kernel, allocates 3 MiB and 1 MiB and frees the 1 MiB; the
  // 3 MiB are freed in B (4); the link of 3 arrives in a later batch; 5 allocates outside every
  // phase (the arena before timing); 6 allocates in a phase with no GPU work.
  IncrementalAttribution attribution;
  DecodedActivity first, second;
  testing::ActivityBuffer a, b;
  a.link(1, pack_phase_id(kForward)).kernel(1, 100, 150, "gemm").link(2, pack_phase_id(kForward));
  a.memory_record(2, true, 3 << 20)
      .memory_record(3, true, 1 << 20)
      .memory_record(3, false, 1 << 20);
  a.link(4, pack_phase_id(kBackward)).kernel(4, 200, 230, "gemm").memory_record(4, false, 3 << 20);
  a.memory_record(5, true, 64 << 20);
  decode(a, first);
  attribution.add(first);
  b.link(3, pack_phase_id(kForward)).link(6, pack_phase_id({Pass::recompute_full, 3, 0, 7}));
  b.memory_record(6, true, 5);
  decode(b, second);
  attribution.add(second);
  const Attribution result = attribution.finish();
  REQUIRE(result.phases.size() == 2); // the allocating phase without GPU work is not timed
  const PhaseMetrics *forward = find(result, kForward);
  REQUIRE(forward != nullptr);
  CHECK(forward->allocations == 2);
  CHECK(forward->allocated_bytes == 3 << 20);
  CHECK(forward->busy_union_ns == 50);
  CHECK(find(result, kBackward)->allocations == 0);
  CHECK(find(result, kBackward)->allocated_bytes == -(3 << 20));
  CHECK(result.allocations_in_phases == 3);
  CHECK(result.unattributed_allocations == 1);
  CHECK(result.unattributed_activities == 0); // allocations are not GPU activity
}

TEST_CASE("a link arriving in a later buffer than its kernels still attributes them") {
  DecodedActivity activity;
  testing::ActivityBuffer kernels;
  kernels.kernel(9, 0 + 5, 25).kernel(10, 30, 40);
  testing::ActivityBuffer links;
  links.link(10, pack_phase_id(kBackward)).link(9, pack_phase_id(kForward));
  decode(kernels, activity);
  decode(links, activity);
  const Attribution attribution = attribute(activity);
  REQUIRE(attribution.phases.size() == 2);
  CHECK(find(attribution, kForward)->busy_union_ns == 20);
  CHECK(find(attribution, kBackward)->busy_union_ns == 10);
  CHECK(attribution.unattributed_activities == 0);
}

TEST_CASE("nested phases: the innermost pushed id wins") {
  DecodedActivity activity;
  testing::ActivityBuffer buffer;
  FakeCorrelationStack cupti;
  cupti.stack.push_back(pack_phase_id(kForward));
  const std::uint32_t outer_before = cupti.launch(buffer);
  cupti.stack.push_back(pack_phase_id({Pass::recompute_selective, 3, 0, 7}));
  const std::uint32_t inner = cupti.launch(buffer);
  cupti.stack.pop_back();
  const std::uint32_t outer_after = cupti.launch(buffer);
  cupti.stack.pop_back();
  const std::uint32_t outside = cupti.launch(buffer);
  buffer.kernel(outer_before, 0 + 1, 11)
      .kernel(inner, 20, 25)
      .kernel(outer_after, 30, 33)
      .kernel(outside, 40, 90);
  decode(buffer, activity);
  const Attribution attribution = attribute(activity);
  CHECK(find(attribution, kForward)->busy_union_ns == 10 + 3);
  CHECK(find(attribution, {Pass::recompute_selective, 3, 0, 7})->busy_union_ns == 5);
  CHECK(attribution.unattributed_activities == 1);
  CHECK(attribution.unattributed_busy_ns == 50);
}

TEST_CASE("a graph launch: many kernels share one correlation id") {
  DecodedActivity activity;
  testing::ActivityBuffer buffer;
  buffer.link(77, pack_phase_id(kForward));
  for (std::uint64_t i = 0; i < 20; ++i)
    buffer.kernel(77, 100 * i, 100 * i + 50);
  decode(buffer, activity);
  const Attribution attribution = attribute(activity);
  REQUIRE(attribution.phases.size() == 1);
  CHECK(attribution.phases[0].n_kernels == 20);
  CHECK(attribution.phases[0].busy_union_ns == 1000);
  CHECK(attribution.phases[0].span_ns == 1950);
}

TEST_CASE("zero-timestamp kernels, foreign kinds and foreign ids are not attributed") {
  DecodedActivity activity;
  testing::ActivityBuffer buffer;
  buffer.link(1, pack_phase_id(kForward)).kernel(1, 0, 0).kernel(1, 10, 20);
  buffer.link(2, pack_phase_id(kForward), CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1)
      .kernel(2, 30, 40);
  buffer.link(3, 12345).kernel(3, 50, 65); // e.g. PyTorch's own ids
  decode(buffer, activity);
  const Attribution attribution = attribute(activity);
  REQUIRE(attribution.phases.size() == 1);
  CHECK(attribution.phases[0].busy_union_ns == 10);
  CHECK(attribution.zero_timestamp_activities == 1);
  CHECK(attribution.unattributed_activities == 2);
  CHECK(attribution.unattributed_busy_ns == 25);
  CHECK(attribution.attributed_busy_ns == 10);
}

} // namespace ppsim::profiler
