#pragma once
// Stage partitioning of a per-layer cost file (docs/partition.md): consecutive layers into p
// stages minimising the slowest stage, under a per-device memory budget that depends on the
// stage's in-flight count (MadPipe-style dynamic program), optionally recomputation-aware
// (a stage's time includes its exposed recomputation under reconstructed Lynx HEU, remat/lynx.h).
#include "base/progress.h"
#include "costs/cost_file.h"
#include "remat/lynx.h"

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace ppsim {

/// A stage's time when it holds layers [first, first + count) as stage `stage`, or nullopt
/// when that does not fit in memory.
using StageTimeFn = std::function<std::optional<double>(int stage, int first, int count)>;

/// A split into stages.
struct Partition {
  std::vector<int> layers_per_stage;
  std::vector<double> stage_ms; ///< stage_time of each stage
  double bottleneck_ms = 0;     ///< the largest stage_ms
  bool operator==(const Partition &) const = default;
};

/// A cheap lower bound on stage_time(stage, f, c) for every interval [f, f + c) that contains
/// [first, first + count) and ends at the same layer; nullopt when none of them fits.
using StageBoundFn = StageTimeFn;

/// The DP of docs/partition.md: best[k][l] = min_n max(best[k-1][l-n], time_{k-1}(l-n, n)).
/// Ties go to the split with fewer layers in the last stage. nullopt when no split fits.
/// Without `lower_bound` each (stage, interval) is evaluated at most once, O(p L^2). With it, the
/// last stage grows only while its bound stays below the best found, and `stage_time` is asked only
/// where the bound leaves room to improve; the result is the same.
/// `progress` hears of each stage's row of the table.
std::optional<Partition> partition_layers(int layers, int stages, const StageTimeFn &stage_time,
                                          const StageBoundFn &lower_bound = {},
                                          const ProgressFn &progress = {});

/// The same DP, and the same answer, where a stage's time never decreases as it takes more layers
/// (nullopt, not fitting, counts as infinite) and the same layers are never slower in a later
/// stage: prefix sums of non-negative times and bytes, with in-flight counts non-increasing along
/// the pipeline, as balanced and cost-aware stages are. Then the best split of the layers before
/// the last stage only improves as that stage grows, and each cell is two binary searches:
/// O(p L log L) in all (40 000 layers took 97 s with partition_layers).
std::optional<Partition> partition_layers_monotone(int layers, int stages,
                                                   const StageTimeFn &stage_time,
                                                   const ProgressFn &progress = {});

/// The default split of a cost file (docs/partition.md, "The default split"): `stages`
/// consecutive groups of layers, weighed by their F + B + W and resident state (parameters,
/// gradients, optimizer states), so an embedding of 0 ms and a heavy LM head weigh what they cost.
/// `stage_device` gives the device of every stage of every pipe (global stage g is split stage
/// g mod `stages`); empty means one device per stage. With one stage per device: the slowest
/// stage as fast as possible, then the largest state as small as possible (exact, by the DP).
/// Where a device holds several stages, that split (or the even one, if better) is improved one
/// moved layer at a time for the device times, slowest first, then the largest device state; a
/// depth-first search over the stage sizes then looks for a faster slowest device (exact when it
/// ends within its node limit) and the moves run again. `bottleneck_ms` is the slowest device's
/// time. Throws Error when there are
/// fewer layers than stages.
Partition cost_balanced_split(const CostFile &costs, int stages,
                              const std::vector<int> &stage_device = {});

/// Microbatches whose activations stage `stage` of `stages` holds at its peak under `schedule`,
/// by the registry entry's formula (docs/partition.md: 1f1b and 1f1b-split p - k, zb-h1 p, zb-h2
/// 2p - 1, v-half (p + 2) div 2). Throws ppsim::Error for a schedule without one.
int in_flight_count(const std::string &schedule, int stages, int stage);

enum class PartitionMode {
  balanced,   ///< time F + B + W; a stage over the budget does not fit
  remat_aware ///< plus exposed recomputation of the HEU policy that fits the budget
};

struct PartitionOptions {
  int stages = 1;
  std::string schedule = "1f1b";
  /// Microbatches each stage holds at its peak; empty: in_flight_count(schedule, stages, k).
  std::vector<int> in_flight;
  PartitionMode mode = PartitionMode::balanced;
  double budget_bytes = std::numeric_limits<double>::infinity(); ///< device memory (--memory)
  int optimizer_shards = 1; ///< data-parallel ranks the optimizer states are sharded over
  WindowModel windows;
  /// Hears of each stage of the DP: long remat-aware runs report progress through it
  /// (docs/partition.md).
  ProgressFn progress;
};

/// One stage of a cost file: its compute time (F + B + W of its layers) and its overlap problem
/// (GPT-block layer profiles, parameters, gradients and optimizer states as static memory, the
/// pipeline window = last layer's output over the P2P link plus the bubble).
struct StageModel {
  double compute_ms = 0;
  OverlapProblem problem;
};

/// options.in_flight[stage], or the schedule's formula when no counts are given.
int stage_in_flight(const PartitionOptions &options, int stage);

/// The model of layers [first, first + count) as stage `stage`.
StageModel stage_model(const CostFile &costs, const PartitionOptions &options, int stage, int first,
                       int count);

/// The stage time of docs/partition.md for a cost file: sum of F + B + W of its layers plus, when
/// remat-aware, the exposed recomputation of HEU; balanced stages fit only keeping everything.
StageTimeFn stage_time_from_costs(const CostFile &costs, const PartitionOptions &options);

/// The lower bound for partition_layers from prefix sums, O(1) a call: the stage's F + B + W,
/// and nullopt when the memory it holds in any plan (everything kept when balanced, only the
/// layer inputs when remat-aware) exceeds the budget.
StageBoundFn stage_bound_from_costs(const CostFile &costs, const PartitionOptions &options);

/// partition_layers over a cost file; throws ppsim::Error when no split fits the budget.
Partition partition_costs(const CostFile &costs, const PartitionOptions &options);

} // namespace ppsim
