#pragma once
// Statistics over repetitions and the measured cost rows (docs/profiler.md, "How measurement
// works"): the *_ms columns are the median over repetitions of busy_union, with p10 and p90 beside
// it; warm-up repetitions are discarded; run-time warnings go to the metadata.
#include "costs/cost_file.h"
#include "profiler/attribution.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim::profiler {

/// Median and nearest-rank p10/p90 of samples in ns, as exact milliseconds.
struct TimeSummary {
  Rational median_ms, p10_ms, p90_ms;
  std::uint64_t samples = 0;

  friend bool operator==(const TimeSummary &, const TimeSummary &) = default;
};
/// Throws InternalError on an empty sample (callers check).
TimeSummary summarize_ns(std::vector<std::uint64_t> samples_ns);

/// One (layer, pass) over every kept repetition and microbatch.
struct PassSummary {
  std::uint16_t layer = 0;
  Pass pass = Pass::forward;
  TimeSummary busy;                     ///< of busy_union_ns
  std::uint64_t span_minus_busy_ns = 0; ///< median-free max gap: flags launch-bound layers
};

/// Groups phases by (layer, pass), dropping repetitions below `warmup`.
std::vector<PassSummary> summarize_passes(const std::vector<PhaseMetrics> &phases, int warmup);

/// Writes measured medians and percentiles into `rows` (matched by layer id) and sets source and
/// n_samples; rows keep their analytic bytes and FLOPs.
void apply_measurements(std::vector<CostRow> &rows, const std::vector<PassSummary> &passes,
                        const std::string &source);

/// What the injection library and the importers write (docs/profiler.md): one row per layer some
/// range measured, under its own id, with the measured times; only the columns of the passes that
/// were measured are written (a script that marks F and the whole backward writes bwd_total_ms, not
/// B and W as zeros), bytes and FLOPs are absent. A layer without a pass that others have gets
/// empty cells for it (CostRow::absent_columns) and a warning.
CostFile injected_cost_file(const std::vector<PassSummary> &passes, const std::string &source);

/// The file's metadata warnings as lines for stderr, "<prefix>: warning: <warning>\n" each: the
/// injection library prints them, since a CSV file has no metadata to carry them.
std::string warning_lines(const CostFile &file, std::string_view prefix);

/// The rank a launcher gave this process: RANK (torchrun), OMPI_COMM_WORLD_RANK, PMI_RANK or
/// SLURM_PROCID, the first set; none outside a launcher. `environment` is getenv or a test's.
std::optional<int> launcher_rank(const std::function<const char *(const char *)> &environment);

/// Where a rank writes its file: "{rank}" in `path` replaced by the rank, else ".rankN" before
/// the extension ("costs.csv" -> "costs.rank3.csv"); `path` itself without a rank.
std::string rank_cost_path(const std::string &path, std::optional<int> rank);

/// The run-time warnings for the metadata (docs/profiler.md, "How measurement works").
std::vector<std::string> measurement_warnings(const DecodedActivity &activity,
                                              const Attribution &attribution,
                                              const std::vector<CostRow> &rows);

/// Sets each row's activation_bytes_full to the median, over its layer's forward phases from
/// repetition `warmup` on, of the bytes the forward allocated and did not free (`forward_kept`),
/// and writes the column. Nothing when `forward_kept` has no kept repetition; when some measured
/// layer has none, the column stays absent and a warning names the layer and `evidence` (what
/// would have measured it).
void apply_forward_kept_bytes(CostFile &file, const std::map<PhaseId, std::int64_t> &forward_kept,
                              int warmup, std::string_view evidence);

/// A byte column of a cost file and the row field behind it.
struct ByteColumn {
  double CostRow::*field;
  const char *name;
};

/// Sets each row's `column` to the median, over its layer's `pass` phases from repetition
/// `warmup` on, of `measured` (negative values count as 0), and writes the column; the rules of
/// apply_forward_kept_bytes for a layer without a measurement.
void apply_phase_bytes(CostFile &file, const std::map<PhaseId, std::int64_t> &measured, Pass pass,
                       int warmup, ByteColumn column, std::string_view evidence);

/// The injection library's cost file (docs/profiler.md): the measured times of the phases from
/// repetition `warmup` on, the run-time warnings, and activation bytes from CUPTI's allocation
/// records for the layers whose every kept forward allocated (a program that allocates its own
/// tensors; a caching allocator such as PyTorch's allocates nothing after its warm-up, and then
/// the column is absent).
CostFile injection_cost_file(const Attribution &attribution, const DecodedActivity &counters,
                             int warmup);

} // namespace ppsim::profiler
