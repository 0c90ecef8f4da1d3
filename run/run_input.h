#pragma once
// What one run is asked for (docs/scenario.md): the scenario (sim/scenario_builder.h's
// ScenarioInput: model, pipeline, cluster) and the settings that only the run layer reads: the
// schedule file, the cost file and its split, the recomputation policy and the ILP's limits.
// A scenario file (run/scenario_file.h) and the command-line flags fill one of these.
#include "costs/cost_file.h"
#include "sim/scenario_builder.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ppsim {

/// The largest value of a count field (devices, microbatches, microbatch size, ...): larger is
/// refused when the scenario is read, and a ranking over microbatch sizes refuses a size whose
/// count of microbatches would exceed it.
inline constexpr std::int64_t kLargestCount = 1'000'000'000;

struct RunInput : ScenarioInput {
  std::string schedule_file; ///< a PyTorch pipelining CSV to run instead of a generator
  std::string remat_policy = "none";
  double remat_time_limit_seconds = 60; ///< ILP time limit
  double remat_relative_gap = 0.03;     ///< ILP relative gap
  std::int64_t remat_node_limit = 0;    ///< ILP branch-and-bound nodes per solve (0: none)
  /// Rotor checkpoint levels per stage the ILP may choose from (needs a cost file; 0 = none;
  /// docs/remat.md, "Checkpoint levels").
  int remat_checkpoint_levels = 0;
  /// Per-layer cost files (profiler output): one, or one per microbatch size, read at
  /// `microbatch_size` (docs/profiler.md, "Microbatch sizes").
  std::vector<std::string> costs_files;
  /// The samples per microbatch (b) the run's costs are read at; 0 = the cost file's own.
  int microbatch_size = 0;
  /// The costs once read (run/model_costs.h, load_cost_file): the runs of a ranking share them
  /// instead of each reading the files again; null = read costs_files when a run needs them.
  std::shared_ptr<const CostFile> loaded_costs;
  std::vector<int> layers_per_stage; ///< with a cost file; empty = split as `partition` says
  /// How the cost file's layers are split when layers_per_stage is empty: "cost" (the slowest
  /// stage as fast as possible, remat/partition.h), "even", or by the partition DP, "balanced" or
  /// "remat-aware" (docs/partition.md).
  std::string partition = "cost";
};

} // namespace ppsim
