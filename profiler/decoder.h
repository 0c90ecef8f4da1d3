#pragma once
// CUPTI activity records -> plain events (docs/profiler.md, "Modules" and "How measurement works").
// Records are read through the smallest CUDA 13.0 struct holding the fields ppsim uses, copying at
// most the bytes the buffer holds, and every string CUPTI owns is copied into the StringTable while
// decoding.
#include "profiler/activity.h"
#include "profiler/cupti_api.h"

#include <cstddef>
#include <cstdint>

namespace ppsim::profiler {

/// cuptiActivityGetNextRecord's contract: *record == nullptr starts at the buffer's beginning.
using NextRecordFunction = CUptiResult (*)(std::uint8_t *, std::size_t, CUpti_Activity **);

/// Record size of a kind in the CUDA 13.0 layout (Kernel10 216, Memcpy6 96, ...); 0 if unknown.
std::size_t activity_record_size(CUpti_ActivityKind kind);

/// ppsim's own iterator over back-to-back records (size table above): MAX_LIMIT_REACHED at the
/// end, INVALID_KIND on an unknown kind or a record running past `valid_bytes`.
CUptiResult next_record_by_size(std::uint8_t *buffer, std::size_t valid_bytes,
                                CUpti_Activity **record);

/// Decodes one record of which `available_bytes` are in the buffer.
void decode_record(const CUpti_Activity *record, std::size_t available_bytes,
                   DecodedActivity &into);

/// Decodes every record of a completed buffer with `next` (the real CUPTI iterator or
/// next_record_by_size). An INVALID_KIND stop counts a truncated buffer.
void decode_buffer(std::uint8_t *buffer, std::size_t valid_bytes, NextRecordFunction next,
                   DecodedActivity &into);

} // namespace ppsim::profiler
