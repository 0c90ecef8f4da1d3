#pragma once
// Schedule synthesis under a memory cap with a certified gap (docs/synthesis.md): the best
// registered schedule of the scenario's placement and backward form as seed, a local search on
// the per-device orders timed by the engine, the exact optimum where its size guard admits the
// instance, and the best lower bound beside the result.
#include "base/time.h"
#include "bounds/exact.h"
#include "bounds/lower_bounds.h"
#include "remat/plan.h"
#include "run/prepare.h"
#include "sim/memory.h"
#include "sim/retime.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace ppsim {

/// How a candidate order performs: the makespan, then the sum of the devices' last ends, which
/// breaks ties so the search prefers orders that free devices earlier.
struct CandidateTime {
  Ticks makespan;
  Ticks total_device_end;

  friend auto operator<=>(const CandidateTime &, const CandidateTime &) = default;
};

/// What became of one candidate move (OrderSearch::try_move).
enum class MoveOutcome {
  kept,        ///< applied: (makespan, total device end) not worse
  worse,       ///< timed, worse, moved back
  fixed_order, ///< it would pass an op of the same (stage, microbatch), whose order is fixed
  /// it would land between a recomputation and the op it runs right before (R before its
  /// B/BW, RW or RBW before its W: where PyTorch's activation checkpointing runs it, inside the
  /// backward); the two themselves move as one
  parts_recomputation,
  over_cap,    ///< the device's peak would exceed the cap (checked before any timing)
  deadlock,    ///< the orders could not all run
};

/// The local search of docs/synthesis.md, "The method", on the per-device orders of one seed:
/// a move puts one entry of a device at another position of the same device, or (with
/// `recompute`) changes the recomputation of one (stage, microbatch). The re-timer
/// (docs/model.md, "Re-timing fixed orders") applies an order move and re-times once, with the
/// engine's times exactly; a move is kept when (makespan, total device end) is not worse, so
/// sideways moves cross plateaus of equal makespan.
class OrderSearch {
public:
  /// `seed` must pass validate_schedule and fit the cap; `scenario` must outlive the search.
  OrderSearch(const Scenario &scenario, const Schedule &seed, std::uint64_t random_seed,
              bool recompute = false);

  /// Tries one random move. With `recompute`, one in 16 changes the recomputation of a random
  /// (stage, microbatch) to another of its choices (none, R of the stage or of one of its
  /// checkpoint levels, and with a split backward RW or RBW, alone or after an R); the others
  /// move an entry (with the op glued to it), half within 4 places, half anywhere on the device
  /// (none when it would leave the entry where it is).
  void step();
  /// Tries giving (stage, microbatch) the recomputation `decision` (R right before its B/BW, RW
  /// or RBW right before its W, as apply_plan places them; the other ops keep their places):
  /// refused over the cap, kept when not worse.
  MoveOutcome try_recompute(int stage, int microbatch, const RematDecision &decision);
  /// Tries moving the entry at `from` of `device` to position `to`, together with the op glued
  /// to it (a recomputation and the op right after it move as one, by the same number of
  /// places; the entries between shift), refusing what breaks a rule of docs/model.md,
  /// "Validation and exit codes", lands between a recomputation and its op, passes the cap or
  /// deadlocks; applies it when it is not worse. The moved unit must stay on the device.
  MoveOutcome try_move(int device, int from, int to);

  [[nodiscard]] Schedule schedule() const { return retimer_.schedule(); }
  [[nodiscard]] CandidateTime time() const { return time_; }
  [[nodiscard]] std::int64_t evaluations() const { return evaluations_; }
  [[nodiscard]] std::int64_t improvements() const { return improvements_; }

private:
  // Whether the entry at `position` of `device` (if any) is R, RW or RBW.
  [[nodiscard]] bool is_recompute_entry(int device, int position) const;
  // The unit of moves that holds the entry at `position` of `device`, as (start, count): a
  // recomputation and the op right after it (its B/BW, or its W) move together, any other entry
  // alone.
  [[nodiscard]] std::pair<int, int> unit_at(int device, int position) const;
  // The unit moved from `start` to `new_start` would pass an entry of one of its (stage,
  // microbatch)s: the one rule of validate_schedule a move can break that the re-timer's
  // deadlock test does not catch.
  [[nodiscard]] bool passes_own_activation(int device, int start, int count,
                                           int new_start) const;
  // The unit would land between a recomputation and the op right after it.
  [[nodiscard]] bool lands_in_recomputation(int device, int start, int count,
                                            int new_start) const;
  // The peak of `device` with the unit moved.
  double candidate_peak(int device, int start, int count, int new_start);
  [[nodiscard]] CandidateTime current_time() const;
  // Whether W of (stage, microbatch) is an op of its own (or part of an overlapped op): RW and RBW
  // are choices only there.
  [[nodiscard]] bool has_weight_op(int stage, int microbatch) const;
  // The recomputation the current orders give (stage, microbatch).
  [[nodiscard]] RematDecision decision_of(int stage, int microbatch) const;
  // Takes `schedule`, whose orders the re-timer holds, and its entries' memory effects as the
  // search's.
  void adopt(const Schedule &schedule, std::vector<MemoryEffect> effects);

  const Scenario &scenario_;
  const MemoryTrack &track_;
  bool recompute_;
  // Per stage, the checkpoint levels an R may follow (0 without recomputation).
  std::vector<int> stage_levels_;
  Retimer retimer_;
  int devices_;
  // Per entry of the current orders' schedule (the re-timer's nodes).
  std::vector<MemoryEffect> effects_;
  std::vector<Op> ops_;
  std::vector<std::int32_t> candidate_order_;
  CandidateTime time_{};
  std::mt19937_64 random_;
  std::int64_t evaluations_ = 0;
  std::int64_t improvements_ = 0;
};

struct SynthesisOptions {
  double time_limit_seconds = 10;
  /// Candidate moves tried at most; reached before the time limit, the result depends only on
  /// the input and `seed`.
  std::int64_t max_evaluations = 500000;
  std::uint64_t seed = 1;
  /// Size guard of the exact optimum (start-time binaries); 0 = never run it.
  std::int64_t exact_max_start_variables = 20000;
  /// When set (Ctrl-C in Python), the search ends as at its time limit, without the exact optimum.
  const std::atomic<bool> *stop = nullptr;
  /// Recomputation in the search (docs/synthesis.md, "Recomputation"): the registered schedules
  /// that do not fit the cap seed it with full recomputation and with the remat ILP's plan, and a
  /// move may change the recomputation of one (stage, microbatch). False (`--remat none`): orders
  /// without recomputation only.
  bool recompute = true;
  /// Each seed's remat ILP (remat.time_limit, remat.gap); the ILPs together take at most half the
  /// time limit.
  double remat_time_limit_seconds = 60;
  double remat_relative_gap = 0.03;
  /// Branch-and-bound nodes of each seed's ILP solve and of the exact optimum's (0: no limit;
  /// remat.node_limit): with the evaluation limit, a result that depends only on the input.
  std::int64_t node_limit = 0;
};

/// Why the search stopped.
/// Why the search stopped; form_optimum when its form's bound or exact optimum was met but another
/// form searched has a lower bound (synthesize_input), so the gap over both stays open.
enum class SynthesisStop { bound_met, exact_optimum, evaluation_limit, time_limit, form_optimum };

/// "bound met", "exact optimum", "evaluation limit", "time limit", "its form's optimum".
std::string_view describe(SynthesisStop stop);

struct SynthesisResult {
  Schedule schedule; ///< named "synthesized"
  Ticks makespan;    ///< the engine's replay of `schedule`
  Ticks lower_bound; ///< the best proven bound: the bounds of docs/bounds.md or the exact optimum's
  /// "LB2", ..., or "exact" when the exact optimum's search proved it (it found no schedule
  /// ending before it, finished or stopped by its time limit).
  std::string bound_name;
  /// Empty, or why the bounds leave out the cap, so that the gap includes what fitting it costs
  /// (a byte budget).
  std::string bounds_note;
  /// What a limit cut short besides the search: "a seed's ILP at the node limit", "the exact
  /// optimum at the time limit" (each once; empty when nothing was).
  std::vector<std::string> cut_short;
  /// Known schedule the winning search started from: registered ("zb-h1"), registered with a
  /// recomputation plan ("zb-h1 + ilp", "zb-h1 + full") or "serial".
  std::string seed;
  Ticks seed_makespan;
  /// The fastest known schedule (named as `seed`): the one the result is never slower than,
  /// whichever seed's search won.
  std::string best_known;
  Ticks best_known_makespan;
  std::int64_t evaluations = 0; ///< candidate moves tried, refused ones included
  /// Accepted moves that lowered (makespan, total device end), over all the searches.
  std::int64_t improvements = 0;
  SynthesisStop stop = SynthesisStop::evaluation_limit;
  double seconds = 0;

  /// `makespan / lower_bound - 1` (0 when the bound is 0).
  [[nodiscard]] double gap() const;
};

/// Synthesizes a schedule of `scenario` whose backward has form `form` (docs/synthesis.md).
/// Throws CapUnreachable when the cap is below one activation of some stage.
SynthesisResult synthesize(const Scenario &scenario, BackwardForm form,
                           const SynthesisOptions &options = {});

/// One backward form synthesize searched for a scenario input: the run prepared for the
/// schedule that names the form and what the search found.
struct SearchedForm {
  PreparedRun run;
  BackwardForm form = BackwardForm::full;
  SynthesisResult result;
  /// The bound of this form alone (result.lower_bound may be another form's, see
  /// synthesize_input).
  Ticks form_lower_bound;
  std::string form_bound_name;
};

/// What `ppsim synthesize` runs (docs/synthesis.md, "Backward forms"): the search of the input's
/// schedule's placement and backward form, and, when the user named no schedule and some stage
/// has a W, also of the split backward on the same placement (zb-h1's form beside 1f1b's): the
/// fused form cannot express the orders that defer W. The evaluations and the time are shared in
/// order (the first form gets half, the second what is left; a second form that cannot be
/// prepared is not searched). Fastest first; when a slower form's bound is the lower one, the
/// first result's lower bound becomes it (floored to its ticks), so its gap covers every form
/// searched. The first result's evaluations, improvements and seconds are the totals. An explicit
/// `remat.policy = "none"` searches without recomputation; another policy, or checkpoint levels,
/// are refused in one line naming where they were set.
std::vector<SearchedForm> synthesize_input(const RunInput &input,
                                           const SynthesisOptions &options = {});

/// Orders the forms synthesize_input searched fastest first, in time units (ties keep the search
/// order); when a slower form's bound is below the first's, the first result's lower bound
/// becomes it, floored to the first run's ticks and named after it ("LB4 of the split
/// backward"), and a met bound or exact optimum of the first form becomes form_optimum.
void rank_searched_forms(std::vector<SearchedForm> &searched);

/// A synthesized schedule as PyTorch runs it: the orders without recomputation as a pipelining
/// CSV (sim/io/torch_csv.h) and the recomputation plan as docs/remat.md's CSV. The search keeps R
/// right before its B/BW and RW/RBW right before W, so apply_plan of the plan to the orders gives
/// the schedule back. Throws Error where the torch CSV has no form for the orders (two pipes).
struct SynthesisFiles {
  std::string torch_csv;
  std::string plan_csv;
};
SynthesisFiles synthesis_files(const Scenario &scenario, const Schedule &schedule);

/// `ppsim synthesize --format json`'s object: the first form's result, every form searched, and
/// `simulation_json` (the result's report_json) as "simulation". Ends with a line break.
std::string synthesis_json(const std::vector<SearchedForm> &searched,
                           const std::string &simulation_json);

/// Candidate moves of the search that gives `ppsim optimal` its incumbent.
inline constexpr std::int64_t kOptimalSearchEvaluations = 50000;

/// The exact optimum (docs/bounds.md, "Exact optimum") whose horizon is the schedule that a
/// short synthesis search (`search_evaluations` candidates, no exact step) reaches from the known
/// schedules, so a run stopped by its time limit reports that schedule rather than a registered
/// one. `options.incumbent` is ignored; the search's time counts against the time limit.
ExactResult seeded_exact_optimum(const Scenario &scenario, BackwardForm form, ExactOptions options,
                                 std::int64_t search_evaluations = kOptimalSearchEvaluations);

} // namespace ppsim
