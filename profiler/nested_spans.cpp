#include "profiler/nested_spans.h"

#include "base/index.h"

#include <algorithm>

namespace ppsim::profiler {

// Each span gets a jump pointer (Myers, "An applicative random-access stack", 1983; the skew-
// binary ancestor links): up a chain of nested spans the ends only grow, so the climb from the
// last span to start by a time to the first ancestor that ends after it takes O(log depth) steps.
std::optional<PartialOverlap> nest(std::vector<CpuSpan> &spans, std::uint64_t tolerance_ns) {
  // Two spans of one extent (an operator and its only child, in whole microseconds) are taken in
  // the trace's order, the earlier as the outer one, so the answer never depends on the sort.
  std::sort(spans.begin(), spans.end(), [](const CpuSpan &a, const CpuSpan &b) {
    if (a.start != b.start)
      return a.start < b.start;
    return a.end != b.end ? a.end > b.end : a.event < b.event;
  });
  std::vector<std::ptrdiff_t> open;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    CpuSpan &span = spans[i];
    while (!open.empty()) {
      const CpuSpan &outer = spans[ppsim::at(open.back())];
      const bool ended = outer.end <= span.start ||
                         (outer.end <= span.start + tolerance_ns && outer.end < span.end);
      if (ended) { // before this one starts (within the tolerance)
        open.pop_back();
        continue;
      }
      if (span.end > outer.end) {
        if (span.end - outer.end > tolerance_ns)
          return PartialOverlap{&outer, &span};
        span.end = outer.end;
      }
      break;
    }
    span.parent = open.empty() ? -1 : open.back();
    span.jump = -1;
    span.depth = 0;
    if (span.parent >= 0) {
      const CpuSpan &parent = spans[ppsim::at(span.parent)];
      span.depth = parent.depth + 1;
      // Two hops of equal length above the parent become one jump, else the jump is the parent.
      const CpuSpan *jump = parent.jump >= 0 ? &spans[ppsim::at(parent.jump)] : nullptr;
      const bool skip = jump != nullptr && jump->jump >= 0 &&
                        parent.depth - jump->depth ==
                            jump->depth - spans[ppsim::at(jump->jump)].depth;
      span.jump = skip ? jump->jump : span.parent;
    }
    open.push_back(static_cast<std::ptrdiff_t>(i));
  }
  return std::nullopt;
}

std::optional<std::size_t> innermost_span(const std::vector<CpuSpan> &spans, std::uint64_t time) {
  // The last span to start by `time`: the innermost one around it, or a span inside that one.
  const auto last = std::upper_bound(
      spans.begin(), spans.end(), time,
      [](std::uint64_t t, const CpuSpan &span) { return t < span.start; });
  std::ptrdiff_t i = (last - spans.begin()) - 1;
  const auto contains = [&](std::ptrdiff_t j) { return time < spans[ppsim::at(j)].end; };
  while (i >= 0 && !contains(i)) {
    const std::ptrdiff_t jump = spans[ppsim::at(i)].jump;
    i = jump >= 0 && !contains(jump) ? jump : spans[ppsim::at(i)].parent;
  }
  if (i < 0)
    return std::nullopt;
  return static_cast<std::size_t>(i);
}

} // namespace ppsim::profiler
