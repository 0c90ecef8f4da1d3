// Nesting a thread's spans (profiler/nested_spans.h): the innermost span around a time equals a
// brute-force search on random nested spans and on a 100 000-deep chain; a partial overlap is
// returned, one within the tolerance is read as one after the other or as nested.
#include "profiler/nested_spans.h"

#include "base/index.h"

#include <doctest/doctest.h>
#include <algorithm>
#include <random>

namespace ppsim::profiler {
namespace {

// The span of `spans` that contains `time` and starts last (ties: the shorter), by brute force.
std::optional<std::size_t> innermost_by_search(const std::vector<CpuSpan> &spans,
                                               std::uint64_t time) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const CpuSpan &span = spans[i];
    if (span.start <= time && time < span.end &&
        (!best || span.start > spans[*best].start ||
         (span.start == spans[*best].start && span.end <= spans[*best].end)))
      best = i;
  }
  return best;
}

// Random spans nested within [start, end): siblings side by side, each with random children.
void nested_spans(std::mt19937 &random, std::uint64_t start, std::uint64_t end, int depth,
                  std::vector<CpuSpan> &out) {
  std::uint64_t at = start;
  while (depth > 0 && at + 2 < end) {
    const std::uint64_t begin = at + random() % 3;
    const std::uint64_t finish = std::min(end, begin + 1 + random() % (end - begin));
    if (begin >= finish)
      break;
    out.push_back({begin, finish, out.size()});
    nested_spans(random, begin, finish, depth - 1, out);
    at = finish + random() % 2;
  }
}

} // namespace

TEST_CASE("the innermost span equals a brute-force search on random nested spans") {
  std::mt19937 random(20261129);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<CpuSpan> spans;
    nested_spans(random, 0, 200, 1 + trial % 8, spans);
    std::shuffle(spans.begin(), spans.end(), random);
    REQUIRE_FALSE(nest(spans, 0).has_value());
    for (std::uint64_t time = 0; time <= 201; ++time) {
      const std::optional<std::size_t> found = innermost_span(spans, time);
      const std::optional<std::size_t> expected = innermost_by_search(spans, time);
      REQUIRE(found.has_value() == expected.has_value());
      if (found)
        CHECK(spans[*found].index == spans[*expected].index);
    }
  }
}

TEST_CASE("a 100 000-deep chain: the climb finds every level") {
  // Span k is [k, 2n - k): each inside the one before. A time t >= n lies in spans 0 .. 2n-1-t,
  // so the innermost is 2n - 1 - t, reached from the deepest span by jumps.
  constexpr std::uint64_t n = 100'000;
  std::vector<CpuSpan> spans;
  for (std::uint64_t k = 0; k < n; ++k)
    spans.push_back({k, 2 * n - k, k});
  REQUIRE_FALSE(nest(spans, 0).has_value());
  CHECK(spans.back().depth == n - 1);
  for (std::uint64_t time : {n, n + 1, n + 17, 3 * n / 2, 2 * n - 2, 2 * n - 1}) {
    const std::optional<std::size_t> found = innermost_span(spans, time);
    REQUIRE(found.has_value());
    CHECK(spans[*found].index == 2 * n - 1 - time);
  }
  CHECK_FALSE(innermost_span(spans, 2 * n).has_value());
}

TEST_CASE("a partial overlap is returned; within the tolerance, read as nested or sequential") {
  std::vector<CpuSpan> spans{{0, 100, 0, 7}, {50, 150, 1, 9}};
  std::optional<PartialOverlap> overlap = nest(spans, 0);
  REQUIRE(overlap.has_value());
  CHECK(overlap->first->event == 7);
  CHECK(overlap->second->event == 9);
  CHECK(nest(spans, 49).has_value());
  // The earlier span ends within the tolerance after the later starts: one after the other.
  std::vector<CpuSpan> sequential{{0, 100, 0}, {99, 200, 1}};
  REQUIRE_FALSE(nest(sequential, 2).has_value());
  CHECK(sequential[1].parent == -1);
  const std::optional<std::size_t> at_99 = innermost_span(sequential, 99);
  REQUIRE(at_99.has_value());
  CHECK(sequential[*at_99].index == 1);
  // The later span ends within the tolerance after the earlier: nested, its end clipped.
  std::vector<CpuSpan> nested{{0, 100, 0}, {10, 101, 1}};
  REQUIRE_FALSE(nest(nested, 2).has_value());
  CHECK(nested[1].parent == 0);
  CHECK(nested[1].end == 100);
}

} // namespace ppsim::profiler

namespace ppsim::profiler {

TEST_CASE("two spans of one extent nest in the trace's order, whatever order they come in") {
  // An operator and its only child, both [10, 20) in whole microseconds: the earlier event is the
  // outer one, so the innermost around 15 is the later event, in either input order.
  for (const bool reversed : {false, true}) {
    std::vector<CpuSpan> spans{{10, 20, 0, 3}, {10, 20, 1, 5}};
    if (reversed)
      std::swap(spans[0], spans[1]);
    REQUIRE_FALSE(nest(spans, 0).has_value());
    const std::optional<std::size_t> inner = innermost_span(spans, 15);
    REQUIRE(inner.has_value());
    CHECK(spans[*inner].event == 5);
    CHECK(spans[ppsim::at(spans[*inner].parent)].event == 3);
  }
}

} // namespace ppsim::profiler
