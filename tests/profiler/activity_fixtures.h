#pragma once
// Synthetic CUPTI activity buffers for GPU-free tests (docs/profiler.md, "Testing without a GPU"):
// value-initialised CUDA 13.0 record structs copied back to back into an 8-byte aligned buffer.
#include "profiler/decoder.h"

#include <cupti.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace ppsim::profiler::testing {

class ActivityBuffer {
public:
  template <typename Record> ActivityBuffer &add(const Record &record) {
    const std::size_t offset = size_;
    size_ += sizeof(Record);
    storage_.resize((size_ + 7) / 8);
    std::memcpy(reinterpret_cast<std::uint8_t *>(storage_.data()) + offset, &record,
                sizeof(Record));
    return *this;
  }
  ActivityBuffer &kernel(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                         const char *name = "gemm", std::uint32_t stream = 7) {
    auto record = timed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, correlation,
                                                start, end);
    record.streamId = stream;
    record.deviceId = 0;
    record.name = name;
    return add(record);
  }
  ActivityBuffer &
  link(std::uint32_t correlation, std::uint64_t external,
       CUpti_ExternalCorrelationKind kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
    CUpti_ActivityExternalCorrelation record{};
    record.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    record.externalKind = kind;
    record.externalId = external;
    record.correlationId = correlation;
    return add(record);
  }
  ActivityBuffer &memcpy_record(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                                std::uint64_t bytes) {
    return add(transfer<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY, correlation, start, end,
                                               bytes));
  }
  ActivityBuffer &memset_record(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                                std::uint64_t bytes) {
    return add(transfer<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET, correlation, start, end,
                                               bytes));
  }
  /// A MEMORY2 record: cudaMalloc (allocation) or cudaFree of `bytes` by API call `correlation`.
  ActivityBuffer &memory_record(std::uint32_t correlation, bool allocation, std::uint64_t bytes,
                                std::uint64_t timestamp = 1) {
    CUpti_ActivityMemory4 record{};
    record.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    record.memoryOperationType = allocation ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                            : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    record.correlationId = correlation;
    record.bytes = bytes;
    record.timestamp = timestamp;
    return add(record);
  }
  ActivityBuffer &api(std::uint32_t correlation, bool driver = false) {
    CUpti_ActivityAPI record{};
    record.kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
    record.correlationId = correlation;
    record.cbid = 211;
    record.start = 1;
    record.end = 2;
    record.threadId = 42;
    return add(record);
  }
  ActivityBuffer &raw_kind(std::uint32_t kind) { // an unknown or truncated record
    return add(kind);
  }

  std::uint8_t *data() { return reinterpret_cast<std::uint8_t *>(storage_.data()); }
  [[nodiscard]] std::size_t size() const { return size_; }

private:
  // A record of `kind` that ran from `start` to `end` for API call `correlation`.
  template <typename Record>
  static Record timed(CUpti_ActivityKind kind, std::uint32_t correlation, std::uint64_t start,
                      std::uint64_t end) {
    Record record{};
    record.kind = kind;
    record.correlationId = correlation;
    record.start = start;
    record.end = end;
    return record;
  }
  template <typename Record>
  static Record transfer(CUpti_ActivityKind kind, std::uint32_t correlation, std::uint64_t start,
                         std::uint64_t end, std::uint64_t bytes) {
    Record record = timed<Record>(kind, correlation, start, end);
    record.bytes = bytes;
    return record;
  }

  std::vector<std::uint64_t> storage_; // 8-byte alignment, as CUPTI requires
  std::size_t size_ = 0;
};

/// One record of each kind the decoder reads, with `kernel_name` as the kernel's name.
inline ActivityBuffer mixed_buffer(char *kernel_name) {
  ActivityBuffer buffer;
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

/// What decoding `mixed_buffer` must give, whichever iterator reads it.
inline void check_mixed(const DecodedActivity &decoded) {
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

} // namespace ppsim::profiler::testing
