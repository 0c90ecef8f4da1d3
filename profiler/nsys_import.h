#pragma once
// Importer for Nsight Systems' NVTX GPU projection reports (docs/profiler.md, "Import a PyTorch
// trace"): the summary `nsys stats -r nvtx_gpu_proj_sum --format csv report.nsys-rep` (one row
// per range name) or the trace `-r nvtx_gpu_proj_trace` (one row per range instance, so warm-up
// iterations can be dropped), whose ranges are named like ppsim's phases ("L03.B.mb0", or
// "3/B/0" from the injection library). The GPU projection is the GPU time of the work launched
// inside each range, which is what ppsim measures with CUPTI, except that communication kernels
// launched inside a range are part of its projection: NCCL ranges nested in a phase are warned
// about, not subtracted.
#include "profiler/attribution.h"
#include "profiler/stats.h"

#include <string>
#include <string_view>
#include <vector>

namespace ppsim::profiler {

/// One range row that names a ppsim phase.
struct NsysRange {
  PhaseId phase; ///< repetition 0
  std::uint64_t total_projection_ns = 0;
  std::uint64_t instances = 0;
  std::uint64_t median_ns = 0;          ///< "Proj Med (ns)" if present, else total / instances
  std::uint64_t min_ns = 0, max_ns = 0; ///< "Proj Min/Max (ns)" if present, else the median
};

/// The parsed report: ppsim ranges and how many other ranges were ignored.
struct NsysImport {
  std::vector<NsysRange> ranges; ///< from a summary
  /// From a trace: one per range instance, busy = span = its projected duration; the n-th
  /// instance of a (layer, pass, microbatch) in projected start order is repetition n.
  std::vector<PhaseMetrics> instances;
  bool per_instance = false; ///< a trace (instances), not a summary (ranges)
  std::size_t ignored_ranges = 0;
  /// NCCL's own NVTX ranges ("NCCL:ncclAllReduce"; NCCL emits them unless NCCL_NVTX_DISABLE=1).
  std::size_t communication_ranges = 0;
  /// Ranges whose projected time includes communication: a phase instance with an NCCL range
  /// nested in it (by "RangeStack", else by CPU time on the same thread). nsys projects all GPU
  /// work launched inside a range, so its NCCL kernels count as layer time; the report cannot
  /// take them out, so the import warns (one line per layer and pass, in `warnings`).
  std::size_t ranges_with_communication = 0;
  std::vector<std::string> warnings;
};

/// Parses the CSV text of either report, told apart by the header ("Range" and "Total Proj
/// Time (ns)" for the summary, "Name" and "Projected Duration (ns)" for the trace); throws Error
/// naming `source`, line and column on malformed input.
NsysImport parse_nsys_projection_csv(std::string_view text, const std::string &source);

/// Per (layer, pass) summaries for apply_measurements: instance-weighted over microbatches;
/// p10 and p90 are the projection min and max (nsys reports no percentiles).
std::vector<PassSummary> nsys_pass_summaries(const NsysImport &import);

} // namespace ppsim::profiler
