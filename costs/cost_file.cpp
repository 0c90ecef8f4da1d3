// The cost file's schema (docs/profiler.md, "The cost file"): its columns, the checks and
// defaults of a row, merging per-rank files, and the exact decimals times are written as. The CSV
// and JSON forms are in cost_csv.cpp and cost_json.cpp.
#include "costs/cost_file.h"

#include "base/assert.h"
#include "base/decimal.h"
#include "base/error.h"
#include "base/index.h"
#include "base/text_file.h"
#include "costs/cost_columns.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <map>

namespace ppsim {
namespace detail {
namespace {

constexpr std::string_view kRequired[] = {"schema_version", "layer_id", "fwd_ms", "bwd_input_ms",
                                          "bwd_weight_ms"};
// What a rank's file read for merge must have (Required::absent_allowed).
constexpr std::string_view kIdentity[] = {"schema_version", "layer_id"};

constexpr std::string_view kSources[] = {"cupti",     "cuda_events", "analytic",
                                         "synthetic", "nsys_import", "kineto_import"};

std::vector<std::string> column_names() {
  std::vector<std::string> names;
  for (const Column &column : columns())
    names.emplace_back(column.name);
  return names;
}

template <typename Integer> Integer parse_integer(std::string_view text, const Location &where) {
  Integer value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) {
    where.fail(fmt::format("expected a non-negative integer, got \"{}\"", cut_for_message(text)));
  }
  return value;
}

Rational parse_time(std::string_view text, const Location &where) {
  const auto value = parse_rational(text);
  if (!value) {
    // A number with no exact form is out of the range times are read in (docs/model.md, "Time").
    double approximate = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), approximate);
    if (!text.empty() && end == text.data() + text.size() &&
        (error == std::errc::result_out_of_range || (error == std::errc() && approximate > 0))) {
      where.fail(fmt::format(
          "\"{}\" is out of range: times are read exactly, at most 18 significant digits "
          "from 1e-18 to about 9.2e18 ms",
          text));
    }
  }
  if (!value || value->numerator < 0) {
    where.fail(fmt::format("expected a non-negative number, got \"{}\"", cut_for_message(text)));
  }
  return *value;
}

// A layer's byte field at most 2^44 (16 TiB): the whole-byte sums of a stage's checkpoint chain
// (remat/stage_checkpoint.cpp) then stay inside int64 up to 2^18 layers (docs/reliability.md).
constexpr double kMaxBytes = 17592186044416.0;

double parse_bytes(std::string_view text, const Location &where) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool number = !text.empty() && end == text.data() + text.size();
  if (number &&
      (error == std::errc::result_out_of_range || (error == std::errc() && value > kMaxBytes))) {
    where.fail(fmt::format("\"{}\" bytes is out of range: at most 2^44 (16 TiB)", text));
  }
  if (!number || error != std::errc() || !(value >= 0)) {
    where.fail(fmt::format("expected a non-negative number of bytes, got \"{}\"",
                           cut_for_message(text)));
  }
  return value;
}

void check_source(const std::string &text, const Location &where) {
  if (std::find(std::begin(kSources), std::end(kSources), text) == std::end(kSources)) {
    where.fail(fmt::format("unknown source '{}' (expected cupti, cuda_events, analytic, synthetic "
                           "or nsys_import)",
                           text));
  }
}

} // namespace

// Schema order (docs/profiler.md, "The cost file").
const std::vector<Column> &columns() {
  static const std::vector<Column> table{
      {"schema_version", std::monostate{}},
      {"layer_id", &CostRow::layer_id},
      {"layer_name", &CostRow::layer_name},
      {"layer_type", &CostRow::layer_type},
      {"fwd_ms", &CostRow::fwd_ms},
      {"bwd_input_ms", &CostRow::bwd_input_ms},
      {"bwd_weight_ms", &CostRow::bwd_weight_ms},
      {"bwd_total_ms", &CostRow::bwd_total_ms},
      {"recompute_ms", &CostRow::recompute_ms},
      {"recompute_selective_ms", &CostRow::recompute_selective_ms},
      {"fwd_ms_p10", &CostRow::fwd_ms_p10},
      {"fwd_ms_p90", &CostRow::fwd_ms_p90},
      {"bwd_input_ms_p10", &CostRow::bwd_input_ms_p10},
      {"bwd_input_ms_p90", &CostRow::bwd_input_ms_p90},
      {"bwd_weight_ms_p10", &CostRow::bwd_weight_ms_p10},
      {"bwd_weight_ms_p90", &CostRow::bwd_weight_ms_p90},
      {"fwd_flops", &CostRow::fwd_flops},
      {"bwd_input_flops", &CostRow::bwd_input_flops},
      {"bwd_weight_flops", &CostRow::bwd_weight_flops},
      {"recompute_flops", &CostRow::recompute_flops},
      {"input_bytes", &CostRow::input_bytes},
      {"output_bytes", &CostRow::output_bytes},
      {"stored_input_bytes", &CostRow::stored_input_bytes},
      {"activation_bytes_full", &CostRow::activation_bytes_full},
      {"activation_bytes_selective", &CostRow::activation_bytes_selective},
      {"bwd_w_stash_bytes", &CostRow::bwd_w_stash_bytes},
      {"bwd_w_act_bytes", &CostRow::bwd_w_act_bytes},
      {"param_bytes", &CostRow::param_bytes},
      {"grad_bytes", &CostRow::grad_bytes},
      {"optimizer_state_bytes", &CostRow::optimizer_state_bytes},
      {"fwd_peak_temp_bytes", &CostRow::fwd_peak_temp_bytes},
      {"bwd_input_peak_temp_bytes", &CostRow::bwd_input_peak_temp_bytes},
      {"bwd_weight_peak_temp_bytes", &CostRow::bwd_weight_peak_temp_bytes},
      {"recompute_peak_temp_bytes", &CostRow::recompute_peak_temp_bytes},
      {"n_samples", &CostRow::n_samples},
      {"source", &CostRow::source},
  };
  return table;
}

const Column *find_column(std::string_view name) {
  for (const Column &column : columns()) {
    if (column.name == name)
      return &column;
  }
  return nullptr;
}

std::vector<Column> written_columns(const CostFile &file) {
  std::vector<Column> written;
  for (const Column &column : columns()) {
    if (file.only_columns.empty() || contains(file.only_columns, column.name))
      written.push_back(column);
  }
  return written;
}

void Location::fail(const std::string &sentence) const {
  throw Error(source, line, field, sentence);
}

[[noreturn]] void unknown_column(const std::string &name, const Location &where) {
  where.fail(unknown_name("column", name, column_names()));
}

void check_version(std::int64_t version, const Location &where) {
  if (version != kCostSchemaVersion) {
    where.fail(fmt::format("unsupported schema version {} (this ppsim reads version {})", version,
                           kCostSchemaVersion));
  }
}

void assign(CostRow &row, const Column &column, std::string_view text, const Location &where) {
  std::visit(
      [&](auto member) {
        using M = decltype(member);
        if constexpr (std::is_same_v<M, std::monostate>) {
          check_version(parse_integer<std::int64_t>(text, where), where);
        } else if constexpr (std::is_same_v<M, int CostRow::*>) {
          row.*member = parse_integer<int>(text, where);
        } else if constexpr (std::is_same_v<M, std::string CostRow::*>) {
          if (text.empty())
            where.fail("expected a name, got an empty value");
          row.*member = std::string(text);
          if (member == &CostRow::source)
            check_source(row.source, where);
        } else if constexpr (std::is_same_v<M, Rational CostRow::*>) {
          row.*member = parse_time(text, where);
        } else if constexpr (std::is_same_v<M, std::uint64_t CostRow::*>) {
          row.*member = parse_integer<std::uint64_t>(text, where);
        } else {
          row.*member = parse_bytes(text, where);
        }
      },
      column.member);
}

bool is_identity(std::string_view name) {
  return std::find(std::begin(kIdentity), std::end(kIdentity), name) != std::end(kIdentity);
}

bool is_required(std::string_view name, Required required) {
  if (required == Required::absent_allowed)
    return is_identity(name);
  return std::find(std::begin(kRequired), std::end(kRequired), name) != std::end(kRequired);
}

bool measures_fused_backward_only(const std::vector<std::string> &present) {
  return contains(present, "bwd_total_ms") && !contains(present, "bwd_input_ms") &&
         !contains(present, "bwd_weight_ms");
}

std::optional<std::string_view> missing_required(const std::vector<std::string> &present,
                                                 Required required) {
  for (const std::string_view name : kRequired) {
    const bool split_column = name == "bwd_input_ms" || name == "bwd_weight_ms";
    if (split_column && measures_fused_backward_only(present))
      continue;
    if (is_required(name, required) && !contains(present, name))
      return name;
  }
  return std::nullopt;
}

bool contains(const std::vector<std::string> &names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void complete_row(CostRow &row, const std::vector<std::string> &present) {
  const auto has = [&](std::string_view name) { return contains(present, name); };
  if (!has("layer_name"))
    row.layer_name = fmt::format("block{}", row.layer_id);
  if (!has("bwd_total_ms"))
    row.bwd_total_ms = normalized(row.bwd_input_ms + row.bwd_weight_ms);
  if (measures_fused_backward_only(present))
    row.bwd_input_ms = row.bwd_total_ms; // the whole backward, W = 0 (CostFile::fused_only)
  if (!has("recompute_ms"))
    row.recompute_ms = row.fwd_ms;
  if (!has("grad_bytes"))
    row.grad_bytes = row.param_bytes; // gradients in the weights' type
  struct Percentile {
    std::string_view name;
    Rational CostRow::*percentile;
    Rational CostRow::*median;
  };
  const Percentile percentiles[] = {
      {"fwd_ms_p10", &CostRow::fwd_ms_p10, &CostRow::fwd_ms},
      {"fwd_ms_p90", &CostRow::fwd_ms_p90, &CostRow::fwd_ms},
      {"bwd_input_ms_p10", &CostRow::bwd_input_ms_p10, &CostRow::bwd_input_ms},
      {"bwd_input_ms_p90", &CostRow::bwd_input_ms_p90, &CostRow::bwd_input_ms},
      {"bwd_weight_ms_p10", &CostRow::bwd_weight_ms_p10, &CostRow::bwd_weight_ms},
      {"bwd_weight_ms_p90", &CostRow::bwd_weight_ms_p90, &CostRow::bwd_weight_ms}};
  for (const Percentile &entry : percentiles) {
    if (!has(entry.name))
      row.*entry.percentile = row.*entry.median;
  }
}

void check_rows(const CostFile &file) {
  if (file.rows.empty())
    throw Error(file.source_name, 0, "", "the cost file has no layers");
}

void check_layer_id(const CostRow &row, const std::vector<CostRow> &before, LayerIds ids,
                    const Location &where) {
  if (ids == LayerIds::from_zero && row.layer_id != static_cast<int>(before.size())) {
    where.fail(fmt::format("expected layer id {} (rows in layer order from 0), got {}",
                           before.size(), row.layer_id));
  }
  if (ids == LayerIds::ascending &&
      (row.layer_id < 0 || (!before.empty() && row.layer_id <= before.back().layer_id))) {
    where.fail(fmt::format("expected a layer id above {} (rows in layer order), got {}",
                           before.empty() ? -1 : before.back().layer_id, row.layer_id));
  }
}

void note_columns(CostFile &file, const std::vector<std::string> &present) {
  for (const std::string &name : present)
    if (!contains(file.only_columns, name))
      file.only_columns.push_back(name);
}

} // namespace detail

bool CostFile::has_column(std::string_view column) const {
  return only_columns.empty() || detail::contains(only_columns, column);
}

bool CostFile::fused_only() const {
  return !only_columns.empty() && detail::measures_fused_backward_only(only_columns);
}

std::string format_rational(Rational value) {
  __extension__ using Int128 = __int128;
  __extension__ using UInt128 = unsigned __int128;
  value = normalized(value);
  std::int64_t denominator = value.denominator;
  int twos = 0;
  int fives = 0;
  while (denominator % 2 == 0)
    denominator /= 2, ++twos;
  while (denominator % 5 == 0)
    denominator /= 5, ++fives;
  const int digits = std::max(twos, fives);
  if (denominator != 1 || digits > 18) {
    return fmt::format("{}/{}", value.numerator, value.denominator);
  }
  // numerator / (2^twos 5^fives) = numerator * 2^(digits-twos) 5^(digits-fives) / 10^digits.
  Int128 scaled = value.numerator;
  for (int i = twos; i < digits; ++i)
    scaled *= 2;
  for (int i = fives; i < digits; ++i)
    scaled *= 5;
  const bool negative = scaled < 0;
  UInt128 magnitude = static_cast<UInt128>(negative ? -scaled : scaled);
  std::string text;
  do {
    text.insert(text.begin(), static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  if (digits > 0) {
    if (static_cast<int>(text.size()) <= digits) {
      text.insert(0, at(digits + 1) - text.size(), '0');
    }
    text.insert(text.size() - at(digits), 1, '.');
  }
  return negative ? "-" + text : text;
}

CostFile read_cost_file(const std::string &path, LayerIds ids, Required required) {
  const std::string content = read_text_file(path, "cost file");
  const bool json = path.size() >= 5 && path.substr(path.size() - 5) == ".json";
  return json ? parse_cost_json(content, path, ids, required)
              : parse_cost_csv(content, path, ids, required);
}

CostFile merge_cost_files(const std::vector<CostFile> &files) {
  PPSIM_ASSERT(!files.empty());
  CostFile merged;
  merged.metadata = files.front().metadata;
  merged.metadata.warnings.clear();
  merged.metadata.dropped_records = 0;
  merged.metadata.unattributed_kernel_ms = 0;
  std::map<int, const CostFile *> owner;
  bool every_column = false;
  std::vector<const CostFile *> row_file;
  for (const CostFile &file : files) {
    for (const CostRow &row : file.rows) {
      const auto [at, added] = owner.emplace(row.layer_id, &file);
      if (!added) {
        throw Error(file.source_name, 0, "layer_id",
                    fmt::format("layer {} is also in {}", row.layer_id, at->second->source_name));
      }
      merged.rows.push_back(row);
      row_file.push_back(&file);
    }
    every_column = every_column || file.only_columns.empty();
    detail::note_columns(merged, file.only_columns);
    for (const std::string &warning : file.metadata.warnings)
      merged.metadata.warnings.push_back(fmt::format("{}: {}", file.source_name, warning));
    merged.metadata.dropped_records += file.metadata.dropped_records;
    merged.metadata.unattributed_kernel_ms += file.metadata.unattributed_kernel_ms;
  }
  if (every_column)
    merged.only_columns.clear();
  // A row whose file lacks a column the merged file has: absent there, not a default.
  for (std::size_t index = 0; index < merged.rows.size(); ++index) {
    const CostFile &file = *row_file[index];
    if (file.only_columns.empty())
      continue;
    CostRow &row = merged.rows[index];
    for (const detail::Column &column : detail::written_columns(merged)) {
      if (!detail::contains(file.only_columns, column.name) &&
          !detail::contains(row.absent_columns, column.name) && column.name != "schema_version")
        row.absent_columns.emplace_back(column.name);
    }
  }
  std::sort(merged.rows.begin(), merged.rows.end(),
            [](const CostRow &a, const CostRow &b) { return a.layer_id < b.layer_id; });
  for (std::size_t index = 0; index < merged.rows.size(); ++index) {
    if (merged.rows[index].layer_id != static_cast<int>(index))
      throw Error(fmt::format("layer {} is in none of the {} files", index, files.size()));
  }
  return merged;
}

} // namespace ppsim
