#pragma once
// Per-layer cost files written by `ppsim profile` and read by the scenario loader
// (docs/profiler.md, "The cost file"): CSV, one row per layer, or JSON, the same rows plus
// metadata. Times are kept as exact rationals of milliseconds so stage sums feed the exact engine
// (docs/model.md, "Time"); byte counts are doubles.
#include "base/time.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim {

/// The schema version this ppsim reads and writes.
inline constexpr int kCostSchemaVersion = 1;

/// One layer's measured or modelled costs; the names are the CSV columns.
struct CostRow {
  int layer_id = 0;
  std::string layer_name;               ///< "block0", ...; no commas
  std::string layer_type = "gpt_block"; ///< "gpt_block", "llama_block", ...
  Rational fwd_ms;                      ///< F
  Rational bwd_input_ms;                ///< B (activation gradients)
  Rational bwd_weight_ms;               ///< W (weight gradients)
  Rational bwd_total_ms;                ///< the full backward BW
  Rational recompute_ms;                ///< R under full recompute
  Rational recompute_selective_ms;      ///< R under selective (attention core) recompute
  Rational fwd_ms_p10, fwd_ms_p90;
  Rational bwd_input_ms_p10, bwd_input_ms_p90;
  Rational bwd_weight_ms_p10, bwd_weight_ms_p90;
  std::uint64_t fwd_flops = 0;
  std::uint64_t bwd_input_flops = 0;
  std::uint64_t bwd_weight_flops = 0;
  std::uint64_t recompute_flops = 0;
  double input_bytes = 0;                ///< the layer's input tensor
  double output_bytes = 0;               ///< the P2P message to the next stage
  double stored_input_bytes = 0;         ///< checkpoint kept under full recompute
  double activation_bytes_full = 0;      ///< stash kept from F to B
  double activation_bytes_selective = 0; ///< stash under selective recompute
  double bwd_w_stash_bytes = 0;          ///< kept from B to W
  double bwd_w_act_bytes = 0;            ///< of which layer inputs (the rest output gradients)
  double param_bytes = 0;
  double grad_bytes = 0;
  double optimizer_state_bytes = 0;
  double fwd_peak_temp_bytes = 0;
  double bwd_input_peak_temp_bytes = 0;
  double bwd_weight_peak_temp_bytes = 0;
  double recompute_peak_temp_bytes = 0;
  std::uint64_t n_samples =
      0; ///< repetitions behind the medians (0 when modelled); 64-bit, as nsys counts are
  std::string source = "synthetic"; ///< cupti, cuda_events, analytic, synthetic, nsys_import
  /// Columns this row does not have although the file does (a layer whose pass was not
  /// measured): written as empty CSV cells and left out of the JSON object, read back as absent
  /// (the column's default, or an error for a required column). The fields keep their defaults.
  std::vector<std::string> absent_columns;

  friend bool operator==(const CostRow &, const CostRow &) = default;
};

/// Measurement context (the JSON "metadata" object; CSV files carry none).
struct CostMetadata {
  std::string device;
  std::int64_t sm_count = 0, clock_khz = 0, driver = 0, cuda_runtime = 0, cupti_api_version = 0;
  std::string dtype = "bf16";
  std::int64_t b = 0, s = 0, h = 0, a = 0, kv_heads = 0, ffn = 0, tp = 1;
  bool dropout = true;
  std::string attention = "unfused";
  std::string timer = "analytic";
  std::string mode = "isolated";
  std::int64_t warmup = 0, reps = 0, dropped_records = 0;
  double unattributed_kernel_ms = 0;
  std::vector<std::string> warnings;

  friend bool operator==(const CostMetadata &, const CostMetadata &) = default;
};

/// A whole cost file.
struct CostFile {
  int schema_version = kCostSchemaVersion;
  std::vector<CostRow> rows; ///< rows[i].layer_id == i (ascending ids in a rank's file)
  CostMetadata metadata;
  double optimizer_step_ms = 0; ///< JSON "model_level"
  std::string source_name;      ///< file name used in error messages (not written)
  /// When not empty, the writers write only these columns (in schema order): what was not
  /// measured is absent, not zero, so a reader's defaults or its missing-column error apply.
  std::vector<std::string> only_columns;

  /// The file measures the whole backward only (bwd_total_ms, neither bwd_input_ms nor
  /// bwd_weight_ms: a PyTorch trace recorded without shapes): each row's B is then its whole
  /// backward and W is 0, which only schedules with a fused backward may run.
  [[nodiscard]] bool fused_only() const;
  /// The file has `column` (every column when only_columns is empty: a file built in memory).
  [[nodiscard]] bool has_column(std::string_view column) const;
};

/// Which layer ids a file may hold: every layer from 0 in order (a model), or any ascending ids
/// (one rank's layers, before `ppsim profile merge`).
enum class LayerIds { from_zero, ascending };

/// Whether the required columns must have a value in every row (a model the simulator runs), or
/// may be absent, kept absent (a rank's file read by `ppsim profile merge`).
enum class Required { values, absent_allowed };

/// Parses CSV text. Required columns: schema_version, layer_id, fwd_ms, bwd_input_ms,
/// bwd_weight_ms, except that bwd_total_ms alone may stand for both (CostFile::fused_only); absent
/// columns take the defaults documented in docs/profiler.md, and so does
/// an empty cell (an absent value, CostRow::absent_columns), except in a required column, where it
/// is an error naming the line and column. The file's columns are kept in only_columns, so
/// writing it back leaves the absent ones absent. With Required::absent_allowed any of fwd_ms,
/// bwd_input_ms, bwd_weight_ms may be missing or empty (kept absent); layer_id never.
CostFile parse_cost_csv(std::string_view text, const std::string &source,
                        LayerIds ids = LayerIds::from_zero, Required required = Required::values);
/// Parses JSON text ({"schema_version": 1, "metadata": {...}, "layers": [...]}); a key that is
/// missing or null is absent, as an empty CSV cell.
CostFile parse_cost_json(std::string_view text, const std::string &source,
                         LayerIds ids = LayerIds::from_zero, Required required = Required::values);
/// Reads a file, choosing the parser by extension (.json, else CSV).
CostFile read_cost_file(const std::string &path, LayerIds ids = LayerIds::from_zero,
                        Required required = Required::values);

/// Joins per-rank files (each holding the layers its rank ran) into one model: rows by layer id,
/// every id from 0 exactly once, the columns any file has (a row whose file lacks one of them
/// has it absent, an empty cell), the first file's metadata with every file's warnings, dropped
/// records and unattributed time. Throws Error naming the file of a
/// duplicate layer, or the first layer no file holds.
CostFile merge_cost_files(const std::vector<CostFile> &files);

/// All columns (or file.only_columns) in schema order; times as exact decimals (or "n/d" when not
/// decimal).
std::string write_cost_csv(const CostFile &file);
/// The JSON form with metadata and model_level.
std::string write_cost_json(const CostFile &file);

/// "1.25", "0.000001", or "1/3" when the value has no finite decimal form.
std::string format_rational(Rational value);

} // namespace ppsim
