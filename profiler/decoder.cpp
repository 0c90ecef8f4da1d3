#include "profiler/decoder.h"
#include "base/index.h"

#include <algorithm>
#include <cstring>

namespace ppsim::profiler {
namespace {

// A zero-filled copy of the record's prefix: never reads past the buffer, and fields beyond what
// an older runtime wrote stay zero.
template <typename Record> Record read_prefix(const CUpti_Activity *record, std::size_t available) {
  Record copy{};
  std::memcpy(static_cast<void *>(&copy), record, std::min(sizeof(Record), available));
  return copy;
}

std::uint32_t intern_name(const char *name, StringTable &names) {
  return names.intern(name == nullptr ? std::string_view("<unnamed>") : std::string_view(name));
}

} // namespace

std::size_t activity_record_size(CUpti_ActivityKind kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    return sizeof(CUpti_ActivityKernel10);
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    return sizeof(CUpti_ActivityMemcpy6);
  case CUPTI_ACTIVITY_KIND_MEMSET:
    return sizeof(CUpti_ActivityMemset4);
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER:
    return sizeof(CUpti_ActivityAPI);
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
    return sizeof(CUpti_ActivityExternalCorrelation);
  case CUPTI_ACTIVITY_KIND_MARKER:
    return sizeof(CUpti_ActivityMarker2);
  case CUPTI_ACTIVITY_KIND_MEMORY2:
    return sizeof(CUpti_ActivityMemory4);
  case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
    return sizeof(CUpti_ActivityMemoryPool3);
  case CUPTI_ACTIVITY_KIND_OVERHEAD:
    return sizeof(CUpti_ActivityOverhead3);
  case CUPTI_ACTIVITY_KIND_DEVICE:
    return sizeof(CUpti_ActivityDevice5);
  case CUPTI_ACTIVITY_KIND_CONTEXT:
    return sizeof(CUpti_ActivityContext3);
  default:
    return 0;
  }
}

CUptiResult next_record_by_size(std::uint8_t *buffer, std::size_t valid_bytes,
                                CUpti_Activity **record) {
  std::size_t offset = 0;
  if (*record != nullptr) {
    const auto *current = reinterpret_cast<std::uint8_t *>(*record);
    offset = at(current - buffer) + activity_record_size((*record)->kind);
  }
  if (offset >= valid_bytes)
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  if (valid_bytes - offset < sizeof(CUpti_ActivityKind))
    return CUPTI_ERROR_INVALID_KIND;
  CUpti_ActivityKind kind{};
  std::memcpy(&kind, buffer + offset, sizeof kind);
  const std::size_t size = activity_record_size(kind);
  if (size == 0 || offset + size > valid_bytes)
    return CUPTI_ERROR_INVALID_KIND;
  *record = reinterpret_cast<CUpti_Activity *>(buffer + offset);
  return CUPTI_SUCCESS;
}

void decode_record(const CUpti_Activity *record, std::size_t available_bytes,
                   DecodedActivity &into) {
  ++into.records;
  switch (record->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
    const auto kernel = read_prefix<CUpti_ActivityKernel10>(record, available_bytes);
    if (kernel.start == 0 && kernel.end == 0)
      ++into.zero_timestamp_kernels;
    into.gpu.push_back({GpuActivityKind::kernel, kernel.start, kernel.end, kernel.deviceId,
                        kernel.streamId, kernel.correlationId, kernel.graphId, 0,
                        intern_name(kernel.name, into.names)});
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const auto copy = read_prefix<CUpti_ActivityMemcpy6>(record, available_bytes);
    into.gpu.push_back({GpuActivityKind::memcpy, copy.start, copy.end, copy.deviceId, copy.streamId,
                        copy.correlationId, copy.graphId, copy.bytes, 0});
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const auto set = read_prefix<CUpti_ActivityMemset4>(record, available_bytes);
    into.gpu.push_back({GpuActivityKind::memset, set.start, set.end, set.deviceId, set.streamId,
                        set.correlationId, set.graphId, set.bytes, 0});
    break;
  }
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: {
    const auto call = read_prefix<CUpti_ActivityAPI>(record, available_bytes);
    into.api_calls.push_back({record->kind == CUPTI_ACTIVITY_KIND_DRIVER, call.cbid, call.start,
                              call.end, call.threadId, call.correlationId});
    break;
  }
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
    const auto link = read_prefix<CUpti_ActivityExternalCorrelation>(record, available_bytes);
    into.links.push_back(
        {link.correlationId, link.externalId, static_cast<std::uint32_t>(link.externalKind)});
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMORY2: {
    const auto memory = read_prefix<CUpti_ActivityMemory4>(record, available_bytes);
    into.memory.push_back(
        {memory.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
         memory.bytes, memory.address, memory.timestamp, memory.correlationId});
    break;
  }
  case CUPTI_ACTIVITY_KIND_MARKER: {
    const auto marker = read_prefix<CUpti_ActivityMarker2>(record, available_bytes);
    into.markers.push_back({marker.id, static_cast<std::uint32_t>(marker.flags), marker.timestamp,
                            marker.name == nullptr ? 0 : into.names.intern(marker.name)});
    break;
  }
  default:
    ++into.skipped_records;
    break;
  }
}

void decode_buffer(std::uint8_t *buffer, std::size_t valid_bytes, NextRecordFunction next,
                   DecodedActivity &into) {
  CUpti_Activity *record = nullptr;
  for (;;) {
    const CUptiResult status = next(buffer, valid_bytes, &record);
    if (status == CUPTI_ERROR_MAX_LIMIT_REACHED)
      return;
    if (status != CUPTI_SUCCESS) {
      ++into.truncated_buffers; // INVALID_KIND: stop, keep what was decoded
      return;
    }
    const auto offset = at(reinterpret_cast<std::uint8_t *>(record) - buffer);
    decode_record(record, valid_bytes - offset, into);
  }
}

} // namespace ppsim::profiler
