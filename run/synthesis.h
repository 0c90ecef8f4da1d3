#pragma once
// Schedule synthesis under a memory cap with a certified gap (docs/synthesis.md): the best
// registered schedule of the scenario's placement and backward form as seed, a local search on
// the per-device orders timed by the engine, the exact optimum where its size guard admits the
// instance, and the best lower bound beside the result.
#include "base/time.h"
#include "bounds/lower_bounds.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ppsim {

/// How a candidate order performs: the makespan, then the sum of the devices' last ends, which
/// breaks ties so the search prefers orders that free devices earlier.
struct CandidateTime {
  Ticks makespan;
  Ticks total_device_end;

  friend auto operator<=>(const CandidateTime &, const CandidateTime &) = default;
};

/// The one timing function of the search: the engine's times of `schedule` (through the
/// re-timer), or nullopt when it breaks a rule of docs/model.md, "Validation", exceeds the cap,
/// or deadlocks.
std::optional<CandidateTime> evaluate(const Scenario &scenario, const Schedule &schedule);

struct SynthesisOptions {
  double time_limit_seconds = 10;
  /// Candidates timed at most; reached before the time limit, the result depends only on the
  /// input and `seed`.
  std::int64_t max_evaluations = 500000;
  std::uint64_t seed = 1;
  /// Size guard of the exact optimum (start-time binaries); 0 = never run it.
  std::int64_t exact_max_start_variables = 20000;
};

/// Why the search stopped.
enum class SynthesisStop { bound_met, exact_optimum, evaluation_limit, time_limit };

/// "bound met", "exact optimum", "evaluation limit", "time limit".
std::string_view describe(SynthesisStop stop);

struct SynthesisResult {
  Schedule schedule; ///< named "synthesized"
  Ticks makespan;    ///< the engine's replay of `schedule`
  Ticks lower_bound; ///< the best proven bound: the bounds of docs/bounds.md or the exact optimum's
  /// "LB2", ..., or "exact" when the exact optimum's search proved it (it found no schedule
  /// ending before it, finished or stopped by its time limit).
  std::string bound_name;
  std::string seed; ///< known schedule (registered or "serial") the winning search started from
  Ticks seed_makespan;
  /// The fastest known schedule (registered, or "serial"): the one the result is never slower
  /// than, whichever seed's search won.
  std::string best_known;
  Ticks best_known_makespan;
  std::int64_t evaluations = 0; ///< candidates timed
  std::int64_t improvements =
      0; ///< accepted moves that lowered (makespan, total device end), all searches
  SynthesisStop stop = SynthesisStop::evaluation_limit;
  double seconds = 0;

  /// `makespan / lower_bound - 1` (0 when the bound is 0).
  [[nodiscard]] double gap() const;
};

/// Synthesizes a schedule of `scenario` whose backward has form `form` (docs/synthesis.md).
/// Throws CapUnreachable when the cap is below one activation of some stage.
SynthesisResult synthesize(const Scenario &scenario, BackwardForm form,
                           const SynthesisOptions &options = {});

} // namespace ppsim
