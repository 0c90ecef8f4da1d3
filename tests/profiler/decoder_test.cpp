// Record decoder (docs/profiler.md, "How measurement works" and "Testing without a GPU"): synthetic
// buffers through ppsim's own iterator (the real cuptiActivityGetNextRecord reads the same buffer
// in nvidia_libraries_test.cpp).
#include "profiler/decoder.h"

#include "activity_fixtures.h"

#include <cstddef>
#include <doctest/doctest.h>
#include <string>

namespace ppsim::profiler {

TEST_CASE("record sizes are the CUDA 13.0 layouts (docs/profiler.md)") {
  CHECK(activity_record_size(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == 216);
  CHECK(activity_record_size(CUPTI_ACTIVITY_KIND_MEMCPY) == 96);
  CHECK(activity_record_size(CUPTI_ACTIVITY_KIND_MEMSET) == 88);
  CHECK(activity_record_size(CUPTI_ACTIVITY_KIND_MEMORY2) == 128);
  CHECK(activity_record_size(CUPTI_ACTIVITY_KIND_MARKER) == 56);
  CHECK(activity_record_size(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) == 24);
  CHECK(activity_record_size(CUPTI_ACTIVITY_KIND_RUNTIME) == 40);
  CHECK(activity_record_size(CUPTI_ACTIVITY_KIND_DRIVER) == 40);
  CHECK(activity_record_size(CUPTI_ACTIVITY_KIND_INVALID) == 0);
}

TEST_CASE("ppsim's iterator decodes every kind and copies the names CUPTI owns") {
  char name[] = "ampere_bf16_gemm";
  testing::ActivityBuffer buffer = testing::mixed_buffer(name);
  DecodedActivity decoded;
  decode_buffer(buffer.data(), buffer.size(), &next_record_by_size, decoded);
  name[0] = 'X'; // CUPTI reuses its strings: the decoded copy must not change
  testing::check_mixed(decoded);
}

TEST_CASE("an unknown kind stops decoding and keeps what came before") {
  testing::ActivityBuffer buffer;
  buffer.kernel(1, 10, 20).raw_kind(0x7fff).raw_kind(0).kernel(2, 30, 40);
  DecodedActivity decoded;
  decode_buffer(buffer.data(), buffer.size(), &next_record_by_size, decoded);
  CHECK(decoded.gpu.size() == 1);
  CHECK(decoded.truncated_buffers == 1);
}

TEST_CASE("a record running past the valid bytes is not read") {
  testing::ActivityBuffer buffer;
  buffer.kernel(1, 10, 20).kernel(2, 30, 40);
  DecodedActivity decoded;
  decode_buffer(buffer.data(), buffer.size() - 8, &next_record_by_size, decoded);
  CHECK(decoded.gpu.size() == 1);
  CHECK(decoded.truncated_buffers == 1);
  DecodedActivity empty;
  decode_buffer(buffer.data(), 0, &next_record_by_size, empty);
  CHECK(empty.records == 0);
  CHECK(empty.truncated_buffers == 0);
}

TEST_CASE("kernels without timestamps are counted; unused kinds are skipped") {
  testing::ActivityBuffer buffer;
  buffer.kernel(1, 0, 0);
  CUpti_ActivityOverhead3 overhead{};
  overhead.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  buffer.add(overhead);
  DecodedActivity decoded;
  decode_buffer(buffer.data(), buffer.size(), &next_record_by_size, decoded);
  CHECK(decoded.zero_timestamp_kernels == 1);
  CHECK(decoded.skipped_records == 1);
  CHECK(decoded.records == 2);
}

TEST_CASE("a record shorter than the struct is read as a zero-filled prefix") {
  CUpti_ActivityKernel10 kernel{};
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  kernel.start = 5;
  kernel.end = 9;
  kernel.correlationId = 3;
  kernel.graphId = 77; // beyond the prefix below
  DecodedActivity decoded;
  decode_record(reinterpret_cast<const CUpti_Activity *>(&kernel),
                offsetof(CUpti_ActivityKernel10, name), decoded);
  REQUIRE(decoded.gpu.size() == 1);
  CHECK(decoded.gpu[0].correlation_id == 3);
  CHECK(decoded.gpu[0].end_ns == 9);
  CHECK(decoded.gpu[0].graph_id == 0);
  CHECK(decoded.names.text(decoded.gpu[0].name_id) == "<unnamed>");
}

} // namespace ppsim::profiler
