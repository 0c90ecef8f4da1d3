#pragma once
// The user's description of an instance (the model, pipeline and cluster a scenario file and the
// command-line flags give), and the builder that turns it into the engine's Scenario for a given
// schedule. The run's own settings (recomputation, cost file, split, schedule file) are
// run/run_input.h's RunInput, which extends this.
#include "base/time.h"
#include "sim/scenario.h"
#include "sim/schedules/registry.h"

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ppsim {

/// Where a field's value was written, so errors can point at it.
struct SourceLocation {
  std::string file; ///< scenario file, or "" for a command-line flag
  int line = 0;
  std::string field; ///< as the user wrote it: "pipeline.microbatches" or "-m"
};

/// Per-stage byte sizes of the byte model (docs/model.md, "Memory models"); empty vector = not
/// given. Each vector holds 1 value (every stage) or S values.
struct ByteSizesInput {
  std::vector<double> activation;           ///< M_f ("act_bytes")
  std::vector<double> selective_activation; ///< kept by F under selective recomputation
  std::vector<double> kept_after_b;         ///< M_b; default w_stash * M_f
  std::vector<double> kept_after_w;  ///< M_w, held after W to the end; default w_residue * M_f
  std::vector<double> weight_inputs; ///< M_ba; default m_ba_fraction * M_b
  std::vector<double> checkpoint;    ///< M_in + M_out ("ckpt_bytes")
  std::vector<double> parameters;    ///< "param_bytes"
  std::vector<double> gradients;     ///< "grad_bytes"; default param_bytes
  std::vector<double> optimizer;     ///< "optimizer_bytes" (master copy, Adam moments); default 0
  std::vector<double> peak_forward, peak_backward_input, peak_backward_weight, peak_checkpoint;
  std::vector<double> output; ///< boundary message size ("out_bytes")
};

struct ScenarioInput {
  std::string model_name; ///< free label ("model.name"), shown in reports and sweep rows
  std::string schedule = "1f1b";
  int devices = 4;
  int microbatches = 8;
  int chunks = 0;     ///< 0 = the schedule's default v
  int group_size = 0; ///< interleaved g; 0 = PyTorch's m / max(1, m div p)
  /// cost_unit = "device" (the default): times and per-microbatch bytes are one device's share
  /// of the model, split over its v chunks, so every schedule does the same work
  /// (docs/scenario.md).
  bool costs_per_device = true;
  std::vector<Rational> forward{{1, 1}};
  std::vector<Rational> backward_input{{1, 1}};
  std::vector<Rational> backward_weight{{1, 1}};
  std::vector<Rational> recompute_forward;       ///< empty = F
  std::vector<Rational> recompute_weight_inputs; ///< empty = F
  std::vector<Rational> recompute_full_backward; ///< empty = F + B
  /// R of selective (attention-core) recomputation; empty = the GPT-3 fraction of R
  /// (remat/baselines.h)
  std::vector<Rational> recompute_selective;
  std::string time_unit = "ms";
  Rational latency{0, 1};
  double bandwidth_bytes_per_second = std::numeric_limits<double>::infinity();
  bool contention = false;
  bool blocking = false;
  /// cluster.runtime: the runtime's point-to-point behaviour as a preset of `contention` and
  /// `blocking` (docs/model.md, "Runtimes"); none = the two fields as given.
  std::optional<Runtime> runtime;
  /// cluster.gpus_per_node (0: every device on one node): device g sits on node g / n, and a
  /// boundary between devices of different nodes crosses the inter-node link.
  int gpus_per_node = 0;
  Rational inter_node_latency{0, 1};
  double inter_node_bandwidth_bytes_per_second = std::numeric_limits<double>::infinity();
  std::optional<Rational> overlap_fb;
  /// cluster.op_overhead: the runtime's own time per scheduled action (Scenario::op_overhead).
  Rational op_overhead{0, 1};
  MemoryModel memory_model = MemoryModel::count;
  double w_stash = 1.0;
  double w_residue = 0.0;             ///< M_w / M_f: what W leaves allocated (ELF's M_w)
  double m_ba_fraction = 14.0 / 32.0; ///< M_ba / M_b of a GPT block (docs/model.md)
  std::vector<double> zb_mem_f;       ///< three-term model; empty = count units
  std::vector<double> zb_mem_w;
  std::optional<double> cap_activations; ///< K, the count model's cap (docs/model.md, "Words")
  std::optional<double> budget_bytes;    ///< cluster.memory: the device's memory budget in bytes
  /// Data-parallel ranks the optimizer states are sharded over (ZeRO-1, distributed optimizer).
  int optimizer_shards = 1;
  /// Bytes every device holds beside the model's for the runtime (docs/model.md, "Device
  /// memory": NCCL's buffers, the caching allocator's reserve), part of its resident state.
  double runtime_bytes = 0;
  /// The iteration's end (docs/model.md, "The iteration's end"): iteration.end, the
  /// data-parallel replicas and the link their all-reduce crosses, the optimizer step per
  /// device (1 or p values; empty = none).
  IterationEnd iteration_end = IterationEnd::none;
  int data_parallel = 1;
  Rational data_parallel_latency{0, 1};
  double data_parallel_bandwidth_bytes_per_second = std::numeric_limits<double>::infinity();
  std::vector<Rational> optimizer_step;
  ByteSizesInput bytes;
  RematTiming remat_timing = RematTiming::early;
  std::map<std::string, SourceLocation> origins; ///< field key -> where it was set

  /// The recorded location of `key`, or the key itself when it kept its default.
  [[nodiscard]] SourceLocation locate(const std::string &key) const;
  /// Throws Error at `key`'s location.
  [[noreturn]] void fail(const std::string &key, const std::string &sentence) const;
  /// Whether selective recomputation is measured: some stage's R and some stage's kept bytes
  /// under it are positive (a cost file without those columns fills zeros, which would make a
  /// free option that keeps nothing).
  [[nodiscard]] bool measures_selective() const;
};

/// Size guard: F, B and W of every stage and microbatch, the most a run's ops may number
/// (about 150 bytes each in the engine, so some 10 GB), checked before anything is allocated.
inline constexpr std::int64_t kOpsPerStageAndMicrobatch = 3;
inline constexpr std::int64_t kMaxOps = std::int64_t{1} << 26;
/// Throws Error naming pipeline.microbatches (or cluster.devices) when `stages` x `microbatches`
/// x kOpsPerStageAndMicrobatch exceeds kMaxOps.
void check_run_size(const ScenarioInput &input, std::int64_t stages, std::int64_t microbatches);

/// The input's time units (model.time_unit) per second.
double units_per_second(const ScenarioInput &input);

/// What a built scenario is for, so the size guard (check_run_size) counts what will exist: the
/// ops of an order (stages x microbatches x 3), or the scenario alone (its stages), which is all
/// the lower bounds read.
enum class RunSize { orders, scenario };

/// Builds the engine's Scenario for `schedule`: placement, ticks, transfers, memory tracks and
/// caps. Throws Error naming the offending field for impossible values (p < 1, m < 1, negative
/// costs, a list of the wrong length, v not allowed by the placement).
Scenario build_scenario(const ScenarioInput &input, const ScheduleInfo &schedule,
                        RunSize size = RunSize::orders);

/// Builds a Scenario on an explicit placement (CSV imports infer it from the rows).
Scenario build_scenario_on(const ScenarioInput &input, std::vector<int> placement, int chunks,
                           int pipes, RunSize size = RunSize::orders);

} // namespace ppsim
