#pragma once
// The cost file's columns, described once for the CSV and JSON readers and writers, with the
// checks and defaults of one row (docs/profiler.md, "The cost file"). Internal to ppsim_costs;
// implemented in cost_file.cpp.
#include "costs/cost_file.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ppsim::detail {

/// The row field a column fills; monostate for schema_version, which is not a row field.
using ColumnMember = std::variant<std::monostate, int CostRow::*, std::string CostRow::*,
                                  Rational CostRow::*, std::uint64_t CostRow::*, double CostRow::*>;

/// One column: its CSV header and JSON key, and its field.
struct Column {
  std::string_view name;
  ColumnMember member;
};

/// Every column, in schema order.
const std::vector<Column> &columns();
/// The column called `name`, or nullptr.
const Column *find_column(std::string_view name);
/// The columns a writer writes: every one, or those in file.only_columns.
std::vector<Column> written_columns(const CostFile &file);

/// Where a value came from, for error messages: CSV gives a line, JSON a field path.
struct Location {
  const std::string &source;
  int line;
  std::string field;

  /// Throws Error at this place.
  [[noreturn]] void fail(const std::string &sentence) const;
};

/// Throws "unknown column 'NAME'", with a suggestion when one is close.
[[noreturn]] void unknown_column(const std::string &name, const Location &where);
/// Throws unless `version` is kCostSchemaVersion.
void check_version(std::int64_t version, const Location &where);
/// Parses `text` into the column's field of `row` (for schema_version, checks the version).
void assign(CostRow &row, const Column &column, std::string_view text, const Location &where);

/// Whether `name` is schema_version or layer_id, which a row never leaves empty.
bool is_identity(std::string_view name);
/// Whether a row must have a value in column `name`.
bool is_required(std::string_view name, Required required);
/// Whether `present` has bwd_total_ms and neither bwd_input_ms nor bwd_weight_ms: a measurement of
/// the whole backward only (CostFile::fused_only).
bool measures_fused_backward_only(const std::vector<std::string> &present);
/// The first column `required` asks for that `present` lacks (B and W not, for a measurement of
/// the whole backward only).
std::optional<std::string_view> missing_required(const std::vector<std::string> &present,
                                                 Required required);
/// Whether `names` holds `name`.
bool contains(const std::vector<std::string> &names, std::string_view name);

/// Fills what a row may leave out (not in `present`): BW = B + W (or B = BW, W = 0 where only BW
/// is measured), R = F, the percentiles = the median, grad_bytes = param_bytes, a name.
void complete_row(CostRow &row, const std::vector<std::string> &present);
/// Throws unless `row` may follow `before` under `ids`.
void check_layer_id(const CostRow &row, const std::vector<CostRow> &before, LayerIds ids,
                    const Location &where);
/// Throws when the file has no rows.
void check_rows(const CostFile &file);
/// Adds the columns in `present` that file.only_columns lacks.
void note_columns(CostFile &file, const std::vector<std::string> &present);

} // namespace ppsim::detail
