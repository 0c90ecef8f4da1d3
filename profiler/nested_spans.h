#pragma once
// The CPU-side intervals of one thread of a trace (record_function ranges, operators), nested so
// that the innermost one around a time is found in O(log n) (docs/profiler.md, "Import a PyTorch
// trace").
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ppsim::profiler {

struct CpuSpan {
  std::uint64_t start = 0, end = 0; ///< ns; `end` may be clipped by nest()
  std::size_t index = 0;            ///< into the caller's list of ranges or operators
  std::size_t event = 0;            ///< in the trace, for messages
  std::ptrdiff_t parent = -1;       ///< the enclosing span, once nested
  std::ptrdiff_t jump = -1;         ///< an ancestor further up (jump pointers, see nest())
  std::size_t depth = 0;            ///< enclosing spans
};

/// Two spans of one thread that overlap in part: `second` starts inside `first` and ends after it.
struct PartialOverlap {
  const CpuSpan *first, *second;
};

/// Sorts one thread's spans by start (outer first on ties; of two spans of one extent, the one
/// earlier in the trace) and links each to its enclosing span.
/// Spans on a thread nest (record_function and operators are scopes); one that starts inside
/// another and ends after it is returned as a partial overlap, unless the excess is at most
/// `tolerance_ns`: then the two are read as one after the other (when the earlier one ends
/// within the tolerance after the later one starts) or as nested (the later one's end clipped).
std::optional<PartialOverlap> nest(std::vector<CpuSpan> &spans, std::uint64_t tolerance_ns);

/// The innermost span of `spans` (nested by nest()) around `time`, the latest to start among
/// those that contain it, as its position in `spans`; none when no span contains `time`.
std::optional<std::size_t> innermost_span(const std::vector<CpuSpan> &spans, std::uint64_t time);

} // namespace ppsim::profiler
