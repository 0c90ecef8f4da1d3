#pragma once
// Importer for the PyTorch profiler's Chrome trace (kineto; `prof.export_chrome_trace(path)` or
// `tensorboard_trace_handler`), docs/profiler.md "Import a PyTorch trace". Phases are the
// `record_function` ranges named like ppsim's ("L03.F.mb0", or "3/F/0": layer/pass/microbatch;
// scripts/ppsim_annotate.py names a module's blocks so) or as PyTorch pipelining names its own
// ("PP:2I5", "Forward 5": a stage stands for the layer). Each GPU kernel belongs to the innermost
// phase range around the CPU call that launched it (the launch's `correlation` id links the
// two; a call on a thread without a range, autograd's, to the range open on the process's only
// other thread with one); a trace without GPU work times its CPU operators instead, the
// outermost ones inside each range. The n-th range of a (layer, pass, microbatch) is repetition
// n, so warm-up iterations are dropped by summarize_passes. Kernels with communication names (NCCL) are counted apart and
// never as layer time. A whole-backward range (`BW`) is also split into B and W: a backward
// matrix multiply whose output has the shape of a weight the layer's forward `aten::linear` used,
// contracted over the forward's token count, computes a weight gradient (W); every other kernel
// of the range is B. Where one multiply fits both roles (tokens equal a weight dimension) the
// operands' recorded strides decide, and without them the range is left whole with a warning.
// This needs `record_shapes=True`; without shapes only BW is measured.
#include "profiler/attribution.h"

#include "costs/cost_file.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim::profiler {

/// One NCCL kernel: its collective (the launching `record_param_comms` call's "Collective name",
/// else the kernel's name), the message bytes ("In msg nelems" x the size of its "dtype"; 0 when
/// the trace does not say), the kernel's time, and for a send or recv its link.
struct CommunicationKernel {
  std::string collective;
  std::uint64_t bytes = 0;
  std::uint64_t duration_ns = 0;
  /// "0->1": sender and receiver as global ranks. PyTorch records the peer of a send or recv as
  /// its "Rank" (group rank, mapped through "Process Group Ranks"), and the trace's own rank in
  /// "distributedInfo"; "?" stands for a rank the trace does not give. Empty for collectives.
  std::string link;
};

/// time = latency + bytes / bandwidth, fitted by least squares (what a scenario's
/// cluster.link.latency and cluster.link.bandwidth mean, docs/scenario.md).
struct LinkFit {
  double latency_ms = 0;
  double bandwidth_bytes_per_second = 0;
  std::size_t samples = 0;
};

/// The fit over the point-to-point kernels (collective send or recv) with known bytes; none
/// without two distinct sizes or when time does not grow with size.
std::optional<LinkFit> fit_point_to_point(const std::vector<CommunicationKernel> &kernels);

/// fit_point_to_point of each link's kernels, by link; links without a fit are left out.
std::map<std::string, LinkFit> fit_links(const std::vector<CommunicationKernel> &kernels);

/// What a trace gives: per-phase metrics (B and W derived from BW ranges included) and what was
/// left out.
struct KinetoImport {
  std::vector<PhaseMetrics> phases; ///< in PhaseId order
  /// The trace has no GPU work (a CPU run): `kernels` counts the outermost CPU operators of the
  /// phase ranges, which are what is timed, and `communication` c10d's and gloo's.
  bool cpu_timed = false;
  std::size_t kernels = 0;          ///< GPU kernels, copies and sets in the trace
  std::size_t unattributed = 0;     ///< outside every phase range (optimizer, data loading...)
  std::size_t communication = 0;    ///< NCCL kernels, never layer time
  std::uint64_t communication_ns = 0;
  std::vector<CommunicationKernel> communication_kernels;
  /// With profile_memory=True: per forward phase, the CUDA bytes its thread allocated and did not
  /// free inside the range (PyTorch's allocator events): what the layer keeps for its backward.
  std::map<PhaseId, std::int64_t> forward_kept_bytes;
  /// With profile_memory=True: per forward and whole-backward (BW) phase, the most its thread's
  /// allocations rose above the range's start during it, less what a forward keeps at its end:
  /// the transient above the resident memory (workspaces, gradient buffers). A backward without
  /// allocations on its range's thread (its work on autograd's thread under a range opened on
  /// another) or with a recomputation (R) range inside has none.
  std::map<PhaseId, std::int64_t> transient_bytes;
  /// Work that ran on a thread without a phase range (autograd's) and was attributed to the range
  /// open on the process's only other thread with one.
  std::size_t cross_thread = 0;
  std::size_t split_ranges = 0; ///< BW ranges split into B and W
  /// BW ranges left whole because a matrix multiply in them fits both an input and a weight
  /// gradient and its strides do not decide (tokens equal a weight dimension).
  std::size_t ambiguous_ranges = 0;
  std::vector<std::string>
      warnings; ///< one line each; kineto_cost_file copies them to the metadata
};

/// Parses the JSON text; throws Error naming `source` on a malformed trace or one without
/// phase ranges.
KinetoImport parse_kineto_trace(std::string_view text, const std::string &source);

/// The cost file of an import: the measured times of the repetitions from `warmup` on
/// (injected_cost_file) and, where the trace has allocator events, each layer's
/// activation_bytes_full as the median of its forwards' kept bytes, fwd_peak_temp_bytes and
/// bwd_input_peak_temp_bytes as the medians of its forwards' and whole backwards' transients.
CostFile kineto_cost_file(const KinetoImport &import, int warmup);

} // namespace ppsim::profiler
