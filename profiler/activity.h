#pragma once
// Plain events decoded from CUPTI activity records (docs/profiler.md, "Modules" and "How
// measurement works"). Nothing here depends on CUPTI headers, so attribution, statistics and their
// tests build everywhere.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ppsim::profiler {

/// Copies of the strings CUPTI owns (kernel and marker names), each stored once.
class StringTable {
public:
  /// The id of `text`, adding it on first sight.
  std::uint32_t intern(std::string_view text);
  /// The text of an id returned by intern().
  [[nodiscard]] const std::string &text(std::uint32_t id) const { return texts_[id]; }
  [[nodiscard]] std::size_t size() const { return texts_.size(); }

private:
  std::vector<std::string> texts_;
  std::unordered_map<std::string, std::uint32_t> ids_;
};

/// What a GPU activity was.
enum class GpuActivityKind : std::uint8_t { kernel, memcpy, memset };

/// A kernel, copy or memset with GPU timestamps in ns.
struct GpuActivity {
  GpuActivityKind kind = GpuActivityKind::kernel;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t device_id = 0;
  std::uint32_t stream_id = 0;
  std::uint32_t correlation_id = 0; ///< links to the API call that launched it
  std::uint32_t graph_id = 0;       ///< non-zero for kernels of a CUDA graph launch
  std::uint64_t bytes = 0;          ///< copies and memsets
  std::uint32_t name_id = 0;        ///< kernels: StringTable id of the name
};

/// CUPTI's link from an API call's correlation id to the id ppsim pushed around a phase.
struct CorrelationLink {
  std::uint32_t correlation_id = 0;
  std::uint64_t external_id = 0;
  std::uint32_t external_kind = 0; ///< CUpti_ExternalCorrelationKind; ppsim uses CUSTOM0 (= 3)
};

/// A runtime or driver API call.
struct ApiCall {
  bool driver = false;
  std::uint32_t callback_id = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t thread_id = 0;
  std::uint32_t correlation_id = 0;
};

/// One device allocation or release (MEMORY2 records).
struct MemoryEvent {
  bool allocation = true;
  std::uint64_t bytes = 0;
  std::uint64_t address = 0;
  std::uint64_t timestamp_ns = 0;
  std::uint32_t correlation_id = 0;
};

/// An NVTX marker or range end point (MARKER records).
struct MarkerEvent {
  std::uint32_t id = 0;
  std::uint32_t flags = 0;
  std::uint64_t timestamp_ns = 0;
  std::uint32_t name_id = 0;
};

/// Everything decoded so far, plus the accounting the run-time warnings need.
struct DecodedActivity {
  std::vector<GpuActivity> gpu;
  std::vector<CorrelationLink> links;
  std::vector<ApiCall> api_calls;
  std::vector<MemoryEvent> memory;
  std::vector<MarkerEvent> markers;
  StringTable names;
  std::uint64_t records = 0;
  std::uint64_t zero_timestamp_kernels = 0; ///< start == end == 0: CUPTI device buffers ran out
  std::uint64_t skipped_records = 0;        ///< kinds ppsim does not use
  std::uint64_t dropped_records = 0;        ///< cuptiActivityGetNumDroppedRecords
  std::uint64_t truncated_buffers = 0;      ///< iteration stopped on an invalid kind
};

} // namespace ppsim::profiler
