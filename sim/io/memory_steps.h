#pragma once
// The memory timeline of sim/memory.h reduced to the points a reader needs (trace counters,
// Gantt memory curves).
#include "sim/memory.h"

#include <vector>

namespace ppsim {

/// `timeline` as a step function without redundant points. The engine records a point at every
/// op start and end, so back-to-back ops give two points at one time: only the last holds from
/// then on. Points that leave the value unchanged are dropped too.
inline std::vector<MemoryPoint> memory_steps(const std::vector<MemoryPoint> &timeline) {
  std::vector<MemoryPoint> steps;
  for (const MemoryPoint &point : timeline) {
    if (!steps.empty() && steps.back().time == point.time)
      steps.pop_back();
    if (steps.empty() || steps.back().resident != point.resident)
      steps.push_back(point);
  }
  return steps;
}

} // namespace ppsim
