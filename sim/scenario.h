#pragma once
// The instance the engine times (docs/model.md, "Vocabulary"): devices, stages and their placement,
// per-stage costs in ticks, transfer times, memory model and cap. Plain data; the builders that
// fill it from TOML, flags or cost files live in scenario_builder.h and io/.
#include "base/time.h"
#include "sim/schedule.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace ppsim {

/// Durations of one stage's ops (per chunk for multi-chunk placements).
struct StageCosts {
  Ticks forward;
  Ticks backward_input;
  Ticks backward_weight;
  Ticks recompute_forward;       ///< R, default F
  Ticks recompute_weight_inputs; ///< RW, default F
  Ticks recompute_full_backward; ///< RBW, default F + B
  /// R of checkpoint level k (index k - 1): what the level's backward recomputes
  /// (docs/remat.md, "Checkpoint levels"); empty unless levels were derived from layer costs.
  std::vector<Ticks> checkpoint_level_recompute;
};

/// The most checkpoint levels of the rotor front a stage offers the remat ILP (each is a binary
/// per microbatch).
inline constexpr int kMaxCheckpointLevels = 8;
/// The most levels a stage offers the ILP: the rotor's and the selective level.
inline constexpr int kMaxStageLevels = kMaxCheckpointLevels + 1;

/// One checkpointing level of a stage in one memory track: what a forward of that level keeps
/// until its backward, and the most the stage holds while its backward recomputes and runs
/// (both from zero, one microbatch).
struct CheckpointLevelMemory {
  double kept = 0;
  double backward_peak = 0;
  /// Selective recomputation as a level (Korthikanti et al., arXiv 2205.05198): F keeps `kept`
  /// (the record without the attention core), R rebuilds the rest of the record under the
  /// forward's transient and the backward runs on the whole record, exactly as the `selective`
  /// policy (docs/remat.md, "Checkpoint levels"); backward_peak is unused. RW and RBW keep the
  /// stage's own accounting (from its checkpoint), which the policy never combines with R.
  bool selective = false;
};

/// How one tracked quantity (count units or bytes) moves with one stage's ops
/// (docs/model.md, "Memory models"): what F stores, what survives B and W, what RW recomputes, what
/// a non-storing F keeps, and the transient peaks above the resident amount during each op.
struct StageMemory {
  double stored = 0;                    ///< allocated at the start of a storing F (a_s, mem_f, M_f)
  double kept_after_b = 0;              ///< still held after B for W (w_stash*a_s, M_b)
  double kept_after_w = 0;              ///< still held after W (M_w, normally 0)
  double weight_input_share = 0;        ///< part of kept_after_b that RW recomputes (M_ba)
  double checkpoint = 0;                ///< kept by a non-storing F (M_in + M_out)
  double peak_forward = 0;              ///< transient during F or R (Pk_f)
  double peak_backward_input = 0;       ///< transient during B (Pk_b)
  double peak_backward_weight = 0;      ///< transient during W (Pk_w)
  double peak_checkpointed_forward = 0; ///< transient during a non-storing F (Pk_ckpt)
  std::vector<CheckpointLevelMemory> checkpoint_levels; ///< level k at index k - 1
};

/// One memory quantity for every stage, plus what each device holds from start to end
/// (2 x parameter bytes in the byte model, 0 in the count model).
struct MemoryTrack {
  std::vector<StageMemory> stages;
  std::vector<double> device_constant;
  std::optional<double> cap; ///< K (count/zb unit) or bytes; none = uncapped
};

/// Which memory model the cap and the primary peak refer to (docs/model.md, "Memory models").
enum class MemoryModel { count, zb, bytes };

/// When a forward recomputation may start (docs/model.md, "Dependencies" (remat timing)).
enum class RematTiming { early, lumped };

/// A training runtime whose point-to-point behaviour sets the link model (docs/model.md,
/// "Runtimes and topology"): `ideal` overlaps every transfer, `torch`
/// (torch.distributed.pipelining) sends asynchronously on one stream per peer, `megatron`
/// (Megatron-LM) waits for its sends.
enum class Runtime { ideal, torch, megatron };

/// Link behaviour (docs/model.md, "Links and ties").
struct LinkModel {
  bool contention = false; ///< one transfer at a time per ordered device pair
  bool blocking = false;   ///< a transfer also occupies the sending device
};

/// What ends an iteration after its last pipeline op (docs/model.md, "The iteration's end"):
/// nothing (the makespan is the iteration), or each device's data-parallel gradient all-reduce
/// and optimizer step, with a global synchronisation before the steps (`sync`: Megatron's
/// gradient clipping needs the global norm) or without it (`post_validation`: the zero-bubble
/// paper's optimizer post-validation, arXiv 2401.10241 section 4).
enum class IterationEnd { none, sync, post_validation };

struct IterationEndModel {
  IterationEnd mode = IterationEnd::none;
  int data_parallel = 1; ///< d: replicas of the pipeline
  /// Per device: the ring all-reduce of its gradients over the d replicas.
  std::vector<Ticks> all_reduce;
  std::vector<Ticks> optimizer; ///< per device: its optimizer step
};

struct Scenario {
  std::string model_name;        ///< label from the scenario file, may be empty
  int devices = 1;               ///< p
  int microbatches = 1;          ///< m per pipe (what the engine and generators index by)
  int chunks = 1;                ///< v: stages per device and pipe
  int pipes = 1;                 ///< 2 only for DualPipe (docs/model.md, "Placements")
  std::vector<int> stage_layers; ///< cost-file layers per stage of a pipe; empty without a file
  std::vector<int> stage_device; ///< pi(s) for every global stage
  std::vector<StageCosts> stage_costs;
  /// Transfer time across the boundary between stage s and s+1 of the same pipe, both ways
  /// (the gradient to s has the size of s+1's input = s's output). Only charged between devices.
  std::vector<Ticks> boundary_transfer;
  LinkModel link;
  std::optional<Ticks> overlap_duration; ///< F&B of an OV op; default F + B + W of its sub-ops
  /// The runtime's own time per scheduled action (F, B, W, BW, an overlapped F&B), added to its
  /// duration (cluster.op_overhead; docs/model.md, "Runtimes and topology").
  Ticks op_overhead{0};
  RematTiming remat_timing = RematTiming::early;
  MemoryModel memory_model = MemoryModel::count;
  MemoryTrack activations;          ///< count (or zb) unit; always present
  std::optional<MemoryTrack> bytes; ///< byte model, when byte sizes are known
  /// The byte budget the count (or zb) model's cap K was derived from (cluster.memory without
  /// memory_model = "bytes"), so reports name it; none for a K given as such.
  std::optional<double> cap_from_budget;
  TimeScale time_scale;
  double units_per_second = 1e3; ///< model.time_unit's units in a second (throughput)
  IterationEndModel iteration_end;

  [[nodiscard]] int stage_count() const { return static_cast<int>(stage_device.size()); }
  /// The most checkpoint levels any stage offers (0 without levels).
  [[nodiscard]] int most_checkpoint_levels() const {
    std::size_t most = 0;
    for (const StageCosts &costs : stage_costs)
      most = std::max(most, costs.checkpoint_level_recompute.size());
    return static_cast<int>(most);
  }
  /// Per stage, the level that is selective recomputation (CheckpointLevelMemory::selective),
  /// or 0 where there is none.
  [[nodiscard]] std::vector<int> selective_levels() const;
  /// Whether some stage offers selective recomputation as a level.
  [[nodiscard]] bool has_selective_level() const {
    const std::vector<int> levels = selective_levels();
    return std::any_of(levels.begin(), levels.end(), [](int level) { return level > 0; });
  }
  [[nodiscard]] int stages_per_pipe() const { return stage_count() / pipes; }
  /// m as the user wrote it: every pipe's microbatches (what every report prints).
  [[nodiscard]] int total_microbatches() const { return microbatches * pipes; }
  /// True when `stage` is the first stage of its pipe (no forward predecessor). One pipe, the
  /// common case, takes no division: the dependency rule asks this of every op.
  [[nodiscard]] bool is_pipe_entry(int stage) const {
    return pipes == 1 ? stage == 0 : stage % stages_per_pipe() == 0;
  }
  /// True when `stage` is the last stage of its pipe (where the loss turns F into B).
  [[nodiscard]] bool is_pipe_exit(int stage) const {
    return pipes == 1 ? stage == stage_count() - 1
                      : stage % stages_per_pipe() == stages_per_pipe() - 1;
  }
};

/// Duration of a schedule entry under the scenario's costs.
Ticks op_duration(const Scenario &scenario, const Op &op);

} // namespace ppsim
