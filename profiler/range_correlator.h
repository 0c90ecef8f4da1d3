#pragma once
// NVTX ranges -> external correlation ids, for the injection library (docs/profiler.md, "Modules",
// 2.3): a program that names its ranges like ppsim's phases ("3/B/0" = layer/pass/microbatch, or
// "L03.B.mb0") gets its kernels attributed exactly as ppsim's own workload does. Each push of a
// phase range yields the id to push with cuptiActivityPushExternalCorrelationId; the matching pop
// says whether to pop one. Other ranges nest freely and are ignored.
#include "profiler/attribution.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

namespace ppsim::profiler {

/// One thread's range stack (NVTX push/pop ranges are per thread).
class RangeCorrelator {
public:
  /// Past `max_repetitions` ranges of one (layer, pass, microbatch), pushes yield no id: a long
  /// run measures its first repetitions and keeps bounded state.
  explicit RangeCorrelator(std::uint16_t max_repetitions = UINT16_MAX)
      : max_repetitions_(max_repetitions) {}

  /// A range named `name` was pushed: the external id to push, or nullopt for other ranges.
  /// The repetition field counts earlier ranges of the same (layer, pass, microbatch).
  std::optional<std::uint64_t> push(std::string_view name);
  /// A range was popped: true when its push pushed an id. Unbalanced pops return false.
  bool pop();
  /// Ranges currently open.
  [[nodiscard]] std::size_t depth() const { return pushed_.size(); }

private:
  std::uint16_t max_repetitions_;
  std::vector<bool> pushed_;
  std::map<std::tuple<std::uint16_t, Pass, std::uint16_t>, std::uint16_t> seen_;
};

} // namespace ppsim::profiler
