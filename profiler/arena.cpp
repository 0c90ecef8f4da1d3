#include "profiler/arena.h"

#include "base/assert.h"
#include "base/error.h"

#include <fmt/format.h>

namespace ppsim::profiler {

Arena::Arena(std::size_t capacity_bytes, std::size_t alignment)
    : capacity_(capacity_bytes / alignment * alignment), alignment_(alignment) {
  PPSIM_ASSERT(alignment > 0 && (alignment & (alignment - 1)) == 0);
  if (capacity_ > 0)
    free_.emplace(0, capacity_);
}

std::size_t Arena::allocate(std::size_t bytes) {
  const std::size_t size =
      (std::max<std::size_t>(bytes, 1) + alignment_ - 1) / alignment_ * alignment_;
  for (auto block = free_.begin(); block != free_.end(); ++block) {
    if (block->second < size)
      continue;
    const std::size_t offset = block->first;
    const std::size_t remaining = block->second - size;
    free_.erase(block);
    if (remaining > 0)
      free_.emplace(offset + size, remaining);
    used_.emplace(offset, size);
    live_ += size;
    peak_ = std::max(peak_, live_);
    return offset;
  }
  throw Error(fmt::format("the workload arena of {} bytes cannot hold {} more bytes ({} live); "
                          "reduce --batch or --seq",
                          capacity_, size, live_));
}

void Arena::release(std::size_t offset) {
  const auto used = used_.find(offset);
  PPSIM_ASSERT(used != used_.end());
  std::size_t start = offset;
  std::size_t size = used->second;
  live_ -= size;
  used_.erase(used);
  // Coalesce with the free neighbours on both sides.
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == start) {
      start = previous->first;
      size += previous->second;
      free_.erase(previous);
    }
  }
  free_.emplace(start, size);
}

PhaseBytes PhaseMeter::finish() const {
  const std::size_t live_after = arena_.live_bytes();
  return {static_cast<std::int64_t>(live_after) - static_cast<std::int64_t>(live_before_),
          arena_.peak_bytes() - live_after};
}

} // namespace ppsim::profiler
