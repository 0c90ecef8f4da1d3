// Record decoder (docs/profiler.md, "How measurement works" and "Testing without a GPU"): synthetic
// buffers through ppsim's own iterator and, when libcupti loads, through the real
// cuptiActivityGetNextRecord (it iterates such buffers without a GPU or driver).
#include "profiler/decoder.h"

#include "activity_fixtures.h"
#include "profiler/cupti_loader.h"
#include "tests/profiler/machine.h"

#include <cstddef>
#include <doctest/doctest.h>
#include <string>

namespace ppsim::profiler {
namespace {

testing::ActivityBuffer mixed_buffer(char *kernel_name) {
  testing::ActivityBuffer buffer;
  buffer.link(7, 0x0102000300040005ULL).kernel(7, 100, 250, kernel_name, 3).api(7, true);
  CUpti_ActivityMarker2 marker{};
  marker.kind = CUPTI_ACTIVITY_KIND_MARKER;
  marker.id = 9;
  marker.timestamp = 55;
  marker.name = "L03.B.mb0";
  buffer.add(marker);
  buffer.memcpy_record(8, 300, 400, 4096).memset_record(8, 400, 410, 64);
  CUpti_ActivityMemory4 memory{};
  memory.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  memory.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  memory.bytes = 1 << 20;
  memory.address = 0xdead0000;
  memory.timestamp = 77;
  memory.correlationId = 8;
  buffer.add(memory);
  return buffer;
}

void check_mixed(const DecodedActivity &decoded) {
  CHECK(decoded.records == 7);
  CHECK(decoded.truncated_buffers == 0);
  REQUIRE(decoded.links.size() == 1);
  CHECK(decoded.links[0].correlation_id == 7);
  CHECK(decoded.links[0].external_id == 0x0102000300040005ULL);
  CHECK(decoded.links[0].external_kind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
  REQUIRE(decoded.gpu.size() == 3);
  CHECK(decoded.gpu[0].kind == GpuActivityKind::kernel);
  CHECK(decoded.gpu[0].start_ns == 100);
  CHECK(decoded.gpu[0].end_ns == 250);
  CHECK(decoded.gpu[0].stream_id == 3);
  CHECK(decoded.names.text(decoded.gpu[0].name_id) == "ampere_bf16_gemm");
  CHECK(decoded.gpu[1].kind == GpuActivityKind::memcpy);
  CHECK(decoded.gpu[1].bytes == 4096);
  CHECK(decoded.gpu[2].kind == GpuActivityKind::memset);
  CHECK(decoded.gpu[2].bytes == 64);
  REQUIRE(decoded.api_calls.size() == 1);
  CHECK(decoded.api_calls[0].driver);
  CHECK(decoded.api_calls[0].callback_id == 211);
  CHECK(decoded.api_calls[0].thread_id == 42);
  REQUIRE(decoded.markers.size() == 1);
  CHECK(decoded.markers[0].id == 9);
  CHECK(decoded.names.text(decoded.markers[0].name_id) == "L03.B.mb0");
  REQUIRE(decoded.memory.size() == 1);
  CHECK_FALSE(decoded.memory[0].allocation);
  CHECK(decoded.memory[0].bytes == 1u << 20);
  CHECK(decoded.memory[0].address == 0xdead0000);
}

} // namespace

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
  testing::ActivityBuffer buffer = mixed_buffer(name);
  DecodedActivity decoded;
  decode_buffer(buffer.data(), buffer.size(), &next_record_by_size, decoded);
  name[0] = 'X'; // CUPTI reuses its strings: the decoded copy must not change
  check_mixed(decoded);
}

TEST_CASE("the real libcupti iterator reads the same synthetic buffer" *
          doctest::skip(!testing::library_present(cupti_candidates()))) {
  const CuptiLibrary cupti = load_cupti(cupti_candidates());
  char name[] = "ampere_bf16_gemm";
  testing::ActivityBuffer buffer = mixed_buffer(name);
  DecodedActivity decoded;
  decode_buffer(buffer.data(), buffer.size(), cupti.api.activity_get_next_record, decoded);
  check_mixed(decoded);
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
