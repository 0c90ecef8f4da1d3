#include "profiler/activity.h"

namespace ppsim::profiler {

std::uint32_t StringTable::intern(std::string_view text) {
  const auto [position, inserted] =
      ids_.try_emplace(std::string(text), static_cast<std::uint32_t>(texts_.size()));
  if (inserted)
    texts_.emplace_back(text);
  return position->second;
}

} // namespace ppsim::profiler
