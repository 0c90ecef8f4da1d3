#pragma once
// Lifespan memory predictor for periodic schedules (docs/bounds.md, "Lifespan memory predictor";
// PPCM, arXiv 2405.15362): if microbatch k runs the same block shifted by k*T, an activation
// resident for a lifespan l overlaps at most ceil(l / T) microbatches at any instant, so
// `peak_i <= sum over the device's activation parts of ceil(l / T) * size`, with equality in
// the stable phase when m is large. ppsim also evaluates the exact periodic count: the resident
// amount at time t of a schedule whose every microbatch repeats the measured one shifted by kT,
// maximized over t; it is what the stable phase of a periodic schedule reaches, and is below the
// sum of ceilings when the parts of a device (two V chunks) do not peak at the same phase.
#include "base/time.h"
#include "sim/engine.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <vector>

namespace ppsim {

struct MemoryPrediction {
  Ticks period;                       ///< T, the median forward gap of the first stage
  int reference_microbatch = 0;       ///< the microbatch whose lifespans were measured
  std::vector<double> predicted_peak; ///< per device: max over t of the periodic count
  std::vector<double> lifespan_bound; ///< per device: sum of ceil(l / T) * size (docs/bounds.md)
};

/// Measures T, the median gap between the starts of consecutive forwards of stage 0, and each
/// stage's lifespans (from the start of F(s,j), or R(s,j) when recomputed, to the end of the B/BW
/// that releases the unstashed share and of the W/BW that releases the stashed share) on
/// microbatch j = m/2 of a timed schedule, and returns the predicted peak and the lifespan bound
/// of every device, counting only the m microbatches that exist. Throws Error when m < 2 or
/// T <= 0 (the schedule is not periodic).
MemoryPrediction predict_peak_activations(const Scenario &scenario, const Schedule &schedule,
                                          const Timing &timing);

} // namespace ppsim
