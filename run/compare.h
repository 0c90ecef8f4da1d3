#pragma once
// The ranking (docs/compare.md): every schedule with every recomputation policy that can change
// the answer, under one or more memory caps, evaluated by run/evaluate and ordered by makespan.
// `ppsim compare`, `ppsim report` and `ppsim remat --auto` rank here, so on the same input they
// name the same winner.
#include "base/progress.h"
#include "run/evaluate.h"

#include <optional>
#include <string>
#include <vector>

namespace ppsim {

/// One (schedule, policy) run of a ranking, or why it cannot run.
struct RankedRun {
  std::string schedule;
  std::string policy;
  std::optional<Evaluation> evaluation;
  std::string unavailable; ///< the error sentence when there is no evaluation

  [[nodiscard]] bool ran() const { return evaluation.has_value(); }
  [[nodiscard]] bool fits() const { return evaluation && evaluation->fits(); }
};

/// The runs of one cap, fastest first: the runs that fit by makespan (ties keep schedule order,
/// then policy order), then the runs over the cap, then the unavailable ones.
struct Ranking {
  std::optional<double> cap; ///< cluster.K of these runs (none: from the budget, or uncapped)
  std::vector<RankedRun> runs;
  /// The microbatch size b of these runs and their m, where the ranking spans sizes at a fixed
  /// batch (RankRequest::microbatch_sizes); 0 otherwise.
  int microbatch_size = 0;
  int microbatches = 0;
  /// Recomputing (schedule, policy) pairs not evaluated, as "schedule + policy": their makespan
  /// without recomputation is already at or above the best run found, and recomputation only
  /// adds work to a fixed order.
  std::vector<std::string> not_tried;

  /// The fastest run that fits, or null.
  [[nodiscard]] const RankedRun *winner() const;
  /// Each schedule's fastest run, in ranking order (a schedule's best policy).
  [[nodiscard]] std::vector<const RankedRun *> best_per_schedule() const;
};

struct RankRequest {
  RunInput base; ///< the scenario; its schedule and remat.policy are replaced per run
  std::vector<std::string> schedules;
  std::vector<std::string> policies; ///< "none" first when given (see default_policies)
  std::vector<std::optional<double>> caps{std::nullopt};
  /// Microbatch sizes to rank at the base's batch, m x b samples (at_microbatch_size): one
  /// ranking per size and cap; empty = the base's size only.
  std::vector<int> microbatch_sizes;
  /// Where the sizes were given (`--microbatch-sizes`), for the errors about one of them.
  SourceLocation sizes_origin{"", 0, "microbatch sizes"};
  EvaluateOptions evaluate;
  /// Runs evaluated at once. The recomputing runs go in batches of four in a fixed order
  /// whatever the thread count, so the pruning and the result never depend on it.
  unsigned threads = 2;
};

/// The heading of a ranking in tables and the report: "memory cap K = 4", the budget's per-schedule
/// caps, or "no memory cap".
std::string cap_heading(const RunInput &base, const std::optional<double> &cap);
/// cap_heading, and the microbatch size where the ranking spans sizes: "memory cap K = 4,
/// microbatch size 2 (m = 32)".
std::string ranking_heading(const RunInput &base, const Ranking &ranking);

/// `base` at microbatch size `size` with the same samples per iteration, m x b: what a ranking
/// over sizes runs (docs/compare.md, "Microbatch sizes"). b is pipeline.microbatch_size, else
/// the size the cost file records. The size comes from `sizes_origin`, which errors about it
/// (here, and reading the cost files at it) name. Throws Error when the base has no size or its
/// m x b is not a multiple of `size`.
RunInput at_microbatch_size(const RunInput &base, int size, const SourceLocation &sizes_origin);

/// Every run of the rankings in one ranking order (the runs that fit by iteration or makespan,
/// then the runs over the cap, then the unavailable ones; stable): a ranking over sizes, whose
/// rankings all process the same samples. Its first run that fits is the winner.
std::vector<const RankedRun *> pooled_ranking(const std::vector<Ranking> &rankings);

/// Throws Error, before any run, when `request.microbatch_sizes` cannot be ranked: a size below
/// 1 or given twice, a cap counted in microbatches (cluster.K or a cap of `caps`: a microbatch
/// holds b samples, so K is not one memory across sizes; a byte budget is), a per-microbatch
/// cost given in the scenario (it would be the same at every size), or a size whose costs the
/// cost files cannot give (at_microbatch_size, then the files read at that size).
void check_microbatch_sizes(const RankRequest &request);

/// The rankings as JSON (`compare --format json`, `remat --auto --format json`, Python's
/// `ppsim.compare`): {"rankings": [{"cap", "microbatch_size" (null unless the ranking
/// spans sizes), "winner": {"schedule", "policy"} or null, "not_tried", "runs": [{"schedule",
/// "policy", "winner", "unavailable", "report"}]}]}, the runs in ranking order, each report `ppsim simulate --format json`'s object (null when unavailable).
std::string rankings_json(const std::vector<Ranking> &rankings);

/// The names of a comma-separated list ("a,b,,c" -> a, b, c).
std::vector<std::string> split_names(const std::string &text);

/// Every registered schedule, in registry order.
std::vector<std::string> all_schedules();

/// The policies a ranking tries: remat.policy when the scenario sets it (a comma-separated list
/// is allowed), else without a cap only none, and under a cap none, full, selective (where a
/// cost file measures it) and ilp (last, so that the plans found before it prune its solves).
std::vector<std::string> default_policies(const RunInput &base, bool capped);

/// The ranking of `base` as `compare` runs it without options: `schedules` (every registered
/// one when empty) under the base's cap (K, or the budget) with default_policies. compare,
/// remat --auto and a sweep's [rank] start from it.
/// With `caps` given (compare --caps), the runs go under those caps instead, and the policies
/// are those of a capped ranking when one of them, or the budget, caps.
RankRequest rank_request(const RunInput &base, std::vector<std::string> schedules = {},
                         std::optional<std::vector<std::optional<double>>> caps = std::nullopt);

/// Whether the runs of `cap` check a cap K that the count (or zb) model derives from the byte
/// budget, one per schedule (sim/scenario_builder.cpp).
bool cap_of_budget(const RunInput &base, const std::optional<double> &cap);

/// "K = 4", "K of 40 GiB" (a cap derived from the budget) or "budget 80 GiB" (byte model), as
/// the runs check it: progress steps and tables name it.
std::string cap_label(const RunInput &base, const std::optional<double> &cap);

/// Steps a ProgressFn of rank_runs hears of: one per (size, cap, schedule, recomputing policy).
std::size_t rank_steps(const RankRequest &request);

/// One ranking per (microbatch size, cap) of the request, in the request's order.
std::vector<Ranking> rank_runs(const RankRequest &request, const ProgressFn &progress = {});

} // namespace ppsim
