// What the greedy zero-bubble generators book for memory (docs/schedules.md, "zb-auto" and
// "zb-v-greedy").
#include "base/index.h"
#include "sim/memory.h"
#include "sim/schedules/greedy.h"

namespace ppsim::schedules {

PassMemory pass_memory(const Scenario &scenario, int stage) {
  const StageMemory &memory = checked_track(scenario).stages[at(stage)];
  return {memory.stored, -(memory.stored - memory.kept_after_b),
          -(memory.kept_after_b - memory.kept_after_w)};
}

} // namespace ppsim::schedules
