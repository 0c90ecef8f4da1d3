#pragma once
// Lower bounds on the makespan of any schedule of a scenario (docs/bounds.md, "The bounds").
//
// Model (docs/bounds.md, "Model and assumptions (all bounds)", derived for ppsim since the
// Mind-Bubbles paper's own formulas were not available): the engine of docs/model.md,
// "Dependencies" with constant per-boundary transfer times, no contention, ops never overlapped (an
// OV op faster than its parts is outside the model), the activation track of the scenario (count or
// zb unit) with cap K. A microbatch's activation of stage s is kept (resident from the start of
// F(s,j) to the end of its backward) or recomputed (resident from the start of R(s,j)), and any
// schedule may choose per (s,j). Every value is in ticks and rounded up: all durations are whole
// ticks, so every ASAP makespan is too.
#include "base/time.h"
#include "sim/scenario.h"

#include <optional>
#include <span>
#include <vector>

namespace ppsim {

/// Whether the schedules the bound covers run the full backward (BW) or split it into B and W.
/// Bounds for `split` hold for full-backward schedules too (they are weaker); not the converse,
/// since a split schedule lets the upstream stage continue after B (docs/bounds.md, "The bounds").
enum class BackwardForm { full, split };

/// Per-stage path quantities of docs/bounds.md, "Model and assumptions (all bounds)" (`Bf = B + W`
/// when full, `B` when split).
struct PathProfile {
  std::vector<Ticks> forward_prefix;  ///< PF(s): earliest start of any F(s, j)
  std::vector<Ticks> backward_suffix; ///< PB(s): time still needed after a backward of s ends
  std::vector<Ticks> kept_lifespan;   ///< L_s: minimum residency of a kept activation of s
};

/// PF, PB and L of every stage; chains restart at every pipe entry (DualPipe).
PathProfile path_profile(const Scenario &scenario, BackwardForm form);

/// LB0, chain bound (docs/bounds.md, "The bounds"): microbatch 0 alone runs every F then every
/// backward in sequence and pays each cross-device transfer twice: `sum_s (F_s + Bf_s) + 2 sum_s
/// c_s X(s)`. Holds for any placement, K and remat decisions; maximum over pipes.
Ticks lb0_chain(const Scenario &scenario, BackwardForm form);

/// LB1, per-device path bound (docs/bounds.md, "The bounds"): device g cannot start before
/// `min_{s on g} PF(s)`, must leave `min_{s on g} PB(s)` after its last backward, and runs
/// `m sum_{s on g} (F_s + Bf_s)` in between. Any placement, heterogeneous stages, any K.
Ticks lb1_device_path(const Scenario &scenario, BackwardForm form);

/// LB2, memory-time bound with rematerialization (docs/bounds.md, "LB2 in detail"): for every
/// device, `window start + window tail + min_x max(busy(x), M(x) / K)` over the number `x_s` of
/// kept activations per stage, maximized with LB1. Exact integer minimization when every device
/// holds one stage without checkpoint levels, LP relaxation otherwise (a level is one more
/// option per microbatch). Without a cap it equals LB1.
/// Returns nullopt when the cap is below what any plan holds of some stage at once (one
/// activation, or the least walk of its checkpoint levels): no schedule fits.
std::optional<Ticks> lb2_memory_time(const Scenario &scenario, BackwardForm form);

/// True when LB2 uses the exact integer scan (every device holds exactly one stage, without
/// checkpoint levels).
bool lb2_is_integer_scan(const Scenario &scenario);

/// LB3, split backward (docs/bounds.md, "The bounds"): W has no downstream successor, so a device
/// whose last op is a W needs no tail: `max_g [min PF(s on g) + m sum_{s on g}(F_s + B_s + W_s)]`,
/// and the chain of one microbatch ending with W of the pipe's entry stage:
/// `sum_s (F_s + B_s) + W_entry + 2 sum_s c_s X(s)`. Valid for split and full-backward schedules.
Ticks lb3_split_backward(const Scenario &scenario);

/// LB3_mem (docs/bounds.md, "The bounds", memory-time version for split schedules): window `[min
/// PF, T]`, busy including `m W_s`, kept lifespan `L_s + w_stash W_s` with `Bf = B` (the W-stashed
/// share is resident at least while W runs, even with backward remat), recomputed `r_s + B_s +
/// w_stash W_s`. Returns nullopt as LB2 (no schedule fits). Without a cap it is LB3's device
/// term.
std::optional<Ticks> lb3_memory_time(const Scenario &scenario);

/// LB4, warm-up under the cap (docs/bounds.md, "LB4 in detail"): before `T1_g`, the earliest start
/// of any backward of device g, the device can run only forwards, and every forward it keeps (or
/// recomputes) there is still resident at `T1_g`, so their activations fit in K together. The
/// window's work is therefore at most `min(T1_g - min PF, best kept forwards under K + what
/// forwards recomputed later save)`, and the rest of the device's work (`m (F + B + W)` split,
/// `m (F + Bf)` plus the shortest tail full) runs after `T1_g`. Checkpoint levels add knapsack
/// items (a level's part). Returns nullopt without a cap (it would be at most LB1/LB3) or as LB2
/// when no schedule fits.
std::optional<Ticks> lb4_warmup(const Scenario &scenario, BackwardForm form);

/// span_LB (docs/bounds.md, "The bounds"): a bound on the largest per-device span (ZB convention,
/// not on the makespan): `max_g min_x max(busy_g(x), M_g(x) / K)` with no window shift, busy
/// including W.
std::optional<Ticks> span_lower_bound(const Scenario &scenario, BackwardForm form);

/// A checkpoint level as one more option of a microbatch in the memory-time minimization: its R's
/// time and the least memory-time integral of the microbatch's activation under it.
struct MemoryTimeLevel {
  double recompute = 0;
  double memory_time = 0;
};

/// One stage of a device in the memory-time minimization (docs/bounds.md, "LB2 in detail"), times
/// in ticks.
struct MemoryTimeStage {
  double busy = 0;                ///< per microbatch, without recomputation (F + Bf [+ W])
  double recompute = 0;           ///< r_s, added to busy for each recomputed microbatch
  double unit = 0;                ///< a_s, memory of one activation
  double kept_lifespan = 0;       ///< minimum residency of a kept activation
  double recomputed_lifespan = 0; ///< minimum residency of a recomputed one (>= r_s + Bf_s)
  std::vector<MemoryTimeLevel> levels; ///< checkpoint levels (memory_time_relaxed only)
};

/// `min_{x in {0..m}} max(busy(x), M(x) / cap)` for one stage without levels, exact over the
/// integers.
double memory_time_integer(int microbatches, const MemoryTimeStage &stage, double cap);

/// The same minimum with every microbatch's option fractional (LP relaxation, a greedy over the
/// stages' lower convex hulls of (busy, memory-time), docs/bounds.md "LB2 in detail"); a lower
/// bound of the integer minimum. Checkpoint levels are options too.
double memory_time_relaxed(int microbatches, std::span<const MemoryTimeStage> stages, double cap);

} // namespace ppsim
