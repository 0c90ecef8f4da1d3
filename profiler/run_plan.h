#pragma once
// What the GPU runner does, without a GPU (docs/profiler.md, "How measurement works"): the order of
// the timed phases in each mode, and the phase metrics a CUDA-event timer yields, so that both
// timers feed the same statistics (stats.h).
#include "costs/cost_file.h"
#include "profiler/arena.h"
#include "profiler/attribution.h"

#include <map>

#include <string>
#include <vector>

namespace ppsim::profiler {

/// `isolated`: per layer, every pass with a synchronisation around each one (busy ~ span on one
/// stream). `sequence`: the passes of one microbatch as 1F1B runs them, forwards of every layer,
/// then the backwards in reverse layer order, with no synchronisation in between.
enum class RunMode { isolated, sequence };

/// "isolated" or "sequence"; throws Error naming the `mode` field otherwise.
RunMode parse_run_mode(const std::string &text);
/// The inverse of parse_run_mode (the cost file's metadata).
std::string run_mode_name(RunMode mode);

/// `cupti`: kernel, memcpy and memset activity attributed to phases (busy union); `cuda-events`:
/// one event pair around each phase on the stream (elapsed time, no CUPTI needed).
enum class PhaseTimer { cupti, cuda_events };

/// "cupti" or "cuda-events"; throws Error naming the `timer` field otherwise.
PhaseTimer parse_phase_timer(const std::string &text);
/// The inverse of parse_phase_timer (the cost file's metadata).
std::string phase_timer_name(PhaseTimer timer);

/// One timed phase of a repetition.
struct PhaseStep {
  Pass pass = Pass::forward;
  std::uint16_t layer = 0;

  friend bool operator==(const PhaseStep &, const PhaseStep &) = default;
};

/// The phases of one repetition, in launch order. In sequence mode each layer's backward group
/// is B and W (the training step), then R_full, R_sel and the full BW on a rebuilt stash.
std::vector<PhaseStep> phase_order(RunMode mode, int layers);

/// GPU blocks the runner builds: in sequence mode one per layer, since every layer's stash is
/// live at once after the forwards (one microbatch of 1F1B); in isolated mode one, reused. A
/// block keeps its stash from F or R_full to B or BW, and its W stash from B to W.
int blocks_needed(RunMode mode, int layers);

/// The block a step runs on.
int block_index(RunMode mode, const PhaseStep &step);

/// Whether the runner synchronises the stream after each phase (isolated) or only after each
/// repetition (sequence).
bool synchronizes_each_phase(RunMode mode);

/// The time between the two CUDA events around a phase.
struct EventTiming {
  PhaseId phase;
  float elapsed_ms = 0; ///< cudaEventElapsedTime
};

/// Phase metrics from event timings: busy and span are the elapsed time (events see the stream,
/// not the kernels), so summarize_passes takes medians of it as for the CUPTI timer.
std::vector<PhaseMetrics> phase_metrics_from_events(const std::vector<EventTiming> &timings);

/// Writes each pass's transient workspace as the arena measured it (PhaseMeter: its peak above
/// what it keeps, the largest over the layers) into every row's *_peak_temp_bytes: F, B, W and
/// R_full; the analytic values assume bf16 attention scores, the workload keeps them in fp32.
void apply_arena_peaks(std::vector<CostRow> &rows, const std::map<Pass, PhaseBytes> &measured);

} // namespace ppsim::profiler
