#include "profiler/range_correlator.h"

namespace ppsim::profiler {

std::optional<std::uint64_t> RangeCorrelator::push(std::string_view name) {
  std::optional<PhaseId> phase = parse_range_name(name);
  std::uint16_t *count = phase ? &seen_[{phase->layer, phase->pass, phase->microbatch}] : nullptr;
  if (count != nullptr && *count >= max_repetitions_)
    phase.reset(); // enough samples of this phase
  pushed_.push_back(phase.has_value());
  if (!phase)
    return std::nullopt;
  phase->repetition = *count;
  if (*count < UINT16_MAX)
    ++*count; // the id has 16 bits of repetition; saturate
  return pack_phase_id(*phase);
}

bool RangeCorrelator::pop() {
  if (pushed_.empty())
    return false;
  const bool pushed = pushed_.back();
  pushed_.pop_back();
  return pushed;
}

} // namespace ppsim::profiler
