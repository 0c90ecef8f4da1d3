#pragma once
// Building-block search for controllable-memory V schedules (docs/schedules.md, "v-auto"): every
// building block is repeated, squeezed and reordered; the search yields the bubble-versus-memory
// frontier and the best schedule under a memory cap. Used by `v-auto` and `ppsim frontier`.
#include "base/progress.h"
#include "base/time.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <vector>

namespace ppsim::schedules {

/// One point of the frontier: the least bubble any building block reaches at this peak.
struct FrontierPoint {
  int peak_chunks = 0;  ///< peak memory in chunk activations (K units x 2)
  int bubble_slots = 0; ///< max over devices of the bubble in unit slots
  Ticks best_span;      ///< least max span under the scenario's costs among those blocks
};

struct VAutoResult {
  std::vector<FrontierPoint> frontier;      ///< increasing peak
  Schedule best;                            ///< least max span under the scenario's costs
  std::vector<std::vector<Ticks>> best_end; ///< its ASAP end times, shaped like device_ops
  int best_peak_chunks = 0;
  Ticks best_span;
};

/// Runs the search on `scenario` (V placement, v = 2, p >= 2) for a cap of
/// `cap_chunks` chunk activations, over `threads` workers (0 = hardware concurrency). The
/// result does not depend on the thread count. Throws Error when no block fits the cap.
/// Caps past 2p (no block peaks higher) search the same blocks, so any int64 cap is accepted.
/// `progress` hears of each starting pattern searched.
VAutoResult v_auto_search(const Scenario &scenario, std::int64_t cap_chunks, unsigned threads = 0,
                          const ProgressFn &progress = {});

/// The search cap in chunk activations for the scenario's --K (2K rounded down, 2p without
/// one), in 64 bits and saturated at 2^62, so a --K of 3e9 or 1e300 is no overflow.
std::int64_t v_auto_cap_chunks(const Scenario &scenario);

} // namespace ppsim::schedules
