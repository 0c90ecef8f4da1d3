#include "costs/cost_file.h"
#include "base/assert.h"
#include "base/index.h"
#include <map>

#include "base/decimal.h"
#include "base/error.h"
#include "base/text_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <libfccp/csv.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <variant>

namespace ppsim {
namespace {

__extension__ using Int128 = __int128;
__extension__ using UInt128 = unsigned __int128;

using Member = std::variant<std::monostate, int CostRow::*, std::string CostRow::*,
                            Rational CostRow::*, std::uint64_t CostRow::*, double CostRow::*>;

struct Column {
  std::string_view name;
  Member member; // monostate: schema_version, which is not a row field
};

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

constexpr std::string_view kRequired[] = {"schema_version", "layer_id", "fwd_ms", "bwd_input_ms",
                                          "bwd_weight_ms"};
// What a rank's file read for merge must have (Required::absent_allowed).
constexpr std::string_view kIdentity[] = {"schema_version", "layer_id"};

bool is_required(std::string_view name, Required required) {
  if (required == Required::absent_allowed)
    return std::find(std::begin(kIdentity), std::end(kIdentity), name) != std::end(kIdentity);
  return std::find(std::begin(kRequired), std::end(kRequired), name) != std::end(kRequired);
}

bool contains(const std::vector<std::string> &names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}
constexpr std::string_view kSources[] = {"cupti",     "cuda_events", "analytic",
                                         "synthetic", "nsys_import", "kineto_import"};

std::vector<std::string> column_names() {
  std::vector<std::string> names;
  for (const Column &column : columns())
    names.emplace_back(column.name);
  return names;
}

// Where a value came from, for error messages: CSV gives a line, JSON a field path.
struct Location {
  const std::string &source;
  int line;
  std::string field;

  [[noreturn]] void fail(const std::string &sentence) const {
    throw Error(source, line, field, sentence);
  }
};

template <typename Integer> Integer parse_integer(std::string_view text, const Location &where) {
  Integer value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) {
    where.fail(fmt::format("expected a non-negative integer, got \"{}\"", text));
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
    where.fail(fmt::format("expected a non-negative number, got \"{}\"", text));
  }
  return *value;
}

constexpr double kMaxBytes = 1e30;

double parse_bytes(std::string_view text, const Location &where) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool number = !text.empty() && end == text.data() + text.size();
  if (number &&
      (error == std::errc::result_out_of_range || (error == std::errc() && value > kMaxBytes))) {
    where.fail(fmt::format("\"{}\" bytes is out of range: at most 1e30", text));
  }
  if (!number || error != std::errc() || !(value >= 0)) {
    where.fail(fmt::format("expected a non-negative number of bytes, got \"{}\"", text));
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

void check_version(std::int64_t version, const Location &where) {
  if (version != kCostSchemaVersion) {
    where.fail(fmt::format("unsupported schema version {} (this ppsim reads version {})", version,
                           kCostSchemaVersion));
  }
}

// Stores one textual value into its row field.
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

const Column *find_column(std::string_view name) {
  for (const Column &column : columns()) {
    if (column.name == name)
      return &column;
  }
  return nullptr;
}

[[noreturn]] void unknown_column(const std::string &name, const Location &where) {
  where.fail(unknown_name("column", name, column_names()));
}

// Fills what a file may leave out: BW = B + W, R = F, percentiles = the median, a name.
void complete_row(CostRow &row, const std::vector<std::string> &present) {
  const auto has = [&](std::string_view name) {
    return std::find(present.begin(), present.end(), name) != present.end();
  };
  if (!has("layer_name"))
    row.layer_name = fmt::format("block{}", row.layer_id);
  if (!has("bwd_total_ms"))
    row.bwd_total_ms = normalized(row.bwd_input_ms + row.bwd_weight_ms);
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

// The columns a reader saw, for only_columns (the version is always written).
void note_columns(CostFile &file, const std::vector<std::string> &present) {
  for (const std::string &name : present)
    if (std::find(file.only_columns.begin(), file.only_columns.end(), name) ==
        file.only_columns.end())
      file.only_columns.push_back(name);
}

// ---- JSON -------------------------------------------------------------------------------------

std::string json_value_text(const nlohmann::json &value, const Location &where) {
  if (value.is_string())
    return value.get<std::string>();
  if (value.is_number_unsigned())
    return std::to_string(value.get<std::uint64_t>());
  if (value.is_number_integer())
    return std::to_string(value.get<std::int64_t>());
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (!std::isfinite(number))
      where.fail(fmt::format("expected a finite number, got {}", value.dump()));
    // A finite number with no exact decimal form (1e300) reaches the field's own range check.
    const auto exact = rational_from_double(number);
    return exact ? format_rational(*exact) : value.dump();
  }
  where.fail(fmt::format("expected a number or name, got {}", value.dump()));
}

int line_of_byte(std::string_view text, std::size_t byte) {
  byte = std::min(byte, text.size());
  return 1 +
         static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(byte), '\n'));
}

template <typename T>
void read_metadata_field(const nlohmann::json &metadata, const char *key, T &target,
                         const std::string &source) {
  const auto found = metadata.find(key);
  if (found == metadata.end() || found->is_null())
    return;
  try {
    target = found->get<T>();
  } catch (const nlohmann::json::exception &) {
    throw Error(source, 0, fmt::format("metadata.{}", key),
                fmt::format("unexpected value {}", found->dump()));
  }
}

CostMetadata read_metadata(const nlohmann::json &metadata, const std::string &source) {
  CostMetadata result;
  if (!metadata.is_object())
    throw Error(source, 0, "metadata", "expected an object");
  read_metadata_field(metadata, "device", result.device, source);
  read_metadata_field(metadata, "sm_count", result.sm_count, source);
  read_metadata_field(metadata, "clock_khz", result.clock_khz, source);
  read_metadata_field(metadata, "driver", result.driver, source);
  read_metadata_field(metadata, "cuda_runtime", result.cuda_runtime, source);
  read_metadata_field(metadata, "cupti_api_version", result.cupti_api_version, source);
  read_metadata_field(metadata, "dtype", result.dtype, source);
  read_metadata_field(metadata, "b", result.b, source);
  read_metadata_field(metadata, "s", result.s, source);
  read_metadata_field(metadata, "h", result.h, source);
  read_metadata_field(metadata, "a", result.a, source);
  read_metadata_field(metadata, "kv_heads", result.kv_heads, source);
  read_metadata_field(metadata, "ffn", result.ffn, source);
  read_metadata_field(metadata, "tp", result.tp, source);
  read_metadata_field(metadata, "dropout", result.dropout, source);
  read_metadata_field(metadata, "attention", result.attention, source);
  read_metadata_field(metadata, "timer", result.timer, source);
  read_metadata_field(metadata, "mode", result.mode, source);
  read_metadata_field(metadata, "warmup", result.warmup, source);
  read_metadata_field(metadata, "reps", result.reps, source);
  read_metadata_field(metadata, "dropped_records", result.dropped_records, source);
  read_metadata_field(metadata, "unattributed_kernel_ms", result.unattributed_kernel_ms, source);
  read_metadata_field(metadata, "warnings", result.warnings, source);
  return result;
}

// A time as a JSON number when the double prints back to the same exact value, else a string.
nlohmann::ordered_json time_json(Rational value) {
  const std::string text = format_rational(value);
  if (text.find('/') == std::string::npos) {
    const double as_double = std::stod(text);
    const auto back = rational_from_double(as_double);
    if (back && normalized(*back) == normalized(value))
      return as_double;
  }
  return text;
}

std::string byte_text(double value) { return fmt::format("{}", value); }

} // namespace

std::string format_rational(Rational value) {
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

CostFile parse_cost_csv(std::string_view text, const std::string &source, LayerIds ids,
                        Required required) {
  CostFile file;
  file.source_name = source;
  io::LineReader reader(source, text.data(), text.data() + text.size());
  std::vector<const Column *> header;
  std::vector<std::string> present;
  int line_number = 0;
  while (char *raw = reader.next_line()) {
    ++line_number;
    const std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#')
      continue;
    std::vector<std::string_view> fields;
    for (std::size_t start = 0;;) {
      const std::size_t comma = line.find(',', start);
      fields.push_back(
          trim(line.substr(start, comma == std::string_view::npos ? comma : comma - start)));
      if (comma == std::string_view::npos)
        break;
      start = comma + 1;
    }
    if (header.empty()) {
      for (const std::string_view name : fields) {
        const Location where{source, line_number, ""};
        const Column *column = find_column(name);
        if (column == nullptr)
          unknown_column(std::string(name), where);
        if (std::find(present.begin(), present.end(), name) != present.end()) {
          where.fail(fmt::format("duplicate column '{}'", name));
        }
        header.push_back(column);
        present.emplace_back(name);
      }
      for (const std::string_view name : kRequired) {
        if (is_required(name, required) && !contains(present, name))
          throw Error(source, line_number, "", fmt::format("missing column '{}'", name));
      }
      note_columns(file, present);
      continue;
    }
    if (fields.size() != header.size()) {
      throw Error(source, line_number, "",
                  fmt::format("expected {} fields, got {}", header.size(), fields.size()));
    }
    CostRow row;
    std::vector<std::string> row_present;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const std::string_view name = header[i]->name;
      // An empty cell is an absent value (docs/profiler.md, "The cost file"); the identity never
      // is.
      if (fields[i].empty() &&
          std::find(std::begin(kIdentity), std::end(kIdentity), name) == std::end(kIdentity)) {
        row.absent_columns.emplace_back(name);
        continue;
      }
      assign(row, *header[i], fields[i], Location{source, line_number, std::string(name)});
      row_present.emplace_back(name);
    }
    for (const std::string &name : row.absent_columns) {
      if (is_required(name, required)) {
        throw Error(
            source, line_number, name,
            fmt::format(
                "layer {} has no value (an empty cell: not measured); a simulation needs one",
                row.layer_id));
      }
    }
    complete_row(row, row_present);
    check_layer_id(row, file.rows, ids, Location{source, line_number, "layer_id"});
    file.rows.push_back(std::move(row));
  }
  check_rows(file);
  return file;
}

CostFile parse_cost_json(std::string_view text, const std::string &source, LayerIds ids,
                         Required required) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error &error) {
    std::string message = error.what();
    const auto colon = message.find(": ", message.find("column"));
    if (colon != std::string::npos)
      message = message.substr(colon + 2);
    throw Error(source, line_of_byte(text, error.byte == 0 ? 0 : error.byte - 1), "",
                fmt::format("invalid JSON: {}", message));
  } catch (const nlohmann::json::out_of_range &error) {
    // Thrown for a number beyond a double (1e400); nlohmann gives no position for it.
    std::string message = error.what();
    message = message.substr(message.find(']') + 2);
    throw Error(source, 0, "", fmt::format("invalid JSON: {}", message));
  }
  if (!document.is_object())
    throw Error(source, 1, "", "expected a JSON object at the top level");
  CostFile file;
  file.source_name = source;
  const auto version = document.find("schema_version");
  if (version == document.end())
    throw Error(source, 0, "", "missing field 'schema_version'");
  if (!version->is_number_integer()) {
    throw Error(source, 0, "schema_version",
                fmt::format("expected an integer, got {}", version->dump()));
  }
  check_version(version->get<std::int64_t>(), Location{source, 0, "schema_version"});
  if (const auto metadata = document.find("metadata"); metadata != document.end()) {
    file.metadata = read_metadata(*metadata, source);
  }
  if (const auto model = document.find("model_level");
      model != document.end() && model->is_object()) {
    if (const auto step = model->find("optimizer_step_ms");
        step != model->end() && step->is_number()) {
      file.optimizer_step_ms = step->get<double>();
    }
  }
  const auto layers = document.find("layers");
  if (layers == document.end() || !layers->is_array()) {
    throw Error(source, 0, "layers", "expected an array of layer objects");
  }
  std::vector<std::vector<std::string>> row_columns;
  for (std::size_t index = 0; index < layers->size(); ++index) {
    const nlohmann::json &layer = (*layers)[index];
    const std::string path = fmt::format("layers[{}]", index);
    if (!layer.is_object())
      throw Error(source, 0, path, "expected an object");
    CostRow row;
    std::vector<std::string> present;
    for (const auto &[key, value] : layer.items()) {
      const Location where{source, 0, fmt::format("{}.{}", path, key)};
      const Column *column = find_column(key);
      if (column == nullptr)
        unknown_column(key, Location{source, 0, path});
      if (value.is_null() && key != "layer_id")
        continue; // absent, as an empty CSV cell
      assign(row, *column, json_value_text(value, where), where);
      present.push_back(key);
    }
    present.emplace_back("schema_version");
    for (const std::string_view name : kRequired) {
      if (is_required(name, required) && !contains(present, name))
        throw Error(source, 0, path, fmt::format("missing field '{}'", name));
    }
    complete_row(row, present);
    check_layer_id(row, file.rows, ids, Location{source, 0, path + ".layer_id"});
    note_columns(file, present);
    row_columns.push_back(std::move(present));
    file.rows.push_back(std::move(row));
  }
  // A column some layer has and another lacks is absent in the other (written back so).
  for (std::size_t index = 0; index < file.rows.size(); ++index)
    for (const std::string &name : file.only_columns)
      if (!contains(row_columns[index], name))
        file.rows[index].absent_columns.push_back(name);
  check_rows(file);
  return file;
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
    note_columns(merged, file.only_columns);
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
    for (const Column &column : columns()) {
      if (merged.only_columns.empty() || contains(merged.only_columns, column.name)) {
        if (!contains(file.only_columns, column.name) &&
            !contains(row.absent_columns, column.name) && column.name != "schema_version")
          row.absent_columns.emplace_back(column.name);
      }
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

namespace {

// The columns a writer writes: every one, or those the file names.
std::vector<Column> written_columns(const CostFile &file) {
  std::vector<Column> written;
  for (const Column &column : columns()) {
    if (file.only_columns.empty() || std::find(file.only_columns.begin(), file.only_columns.end(),
                                               column.name) != file.only_columns.end())
      written.push_back(column);
  }
  return written;
}

} // namespace

std::string write_cost_csv(const CostFile &file) {
  std::string text;
  const std::vector<Column> written = written_columns(file);
  for (const Column &column : written) {
    if (!text.empty())
      text += ',';
    text += column.name;
  }
  text += '\n';
  for (const CostRow &row : file.rows) {
    bool first = true;
    for (const Column &column : written) {
      if (!first)
        text += ',';
      first = false;
      if (contains(row.absent_columns, column.name))
        continue; // an empty cell
      std::visit(
          [&](auto member) {
            using M = decltype(member);
            if constexpr (std::is_same_v<M, std::monostate>) {
              text += std::to_string(file.schema_version);
            } else if constexpr (std::is_same_v<M, std::string CostRow::*>) {
              text += row.*member;
            } else if constexpr (std::is_same_v<M, Rational CostRow::*>) {
              text += format_rational(row.*member);
            } else if constexpr (std::is_same_v<M, double CostRow::*>) {
              text += byte_text(row.*member);
            } else {
              text += std::to_string(row.*member);
            }
          },
          column.member);
    }
    text += '\n';
  }
  return text;
}

std::string write_cost_json(const CostFile &file) {
  nlohmann::ordered_json document;
  document["schema_version"] = file.schema_version;
  const CostMetadata &m = file.metadata;
  document["metadata"] = {{"device", m.device},
                          {"sm_count", m.sm_count},
                          {"clock_khz", m.clock_khz},
                          {"driver", m.driver},
                          {"cuda_runtime", m.cuda_runtime},
                          {"cupti_api_version", m.cupti_api_version},
                          {"dtype", m.dtype},
                          {"b", m.b},
                          {"s", m.s},
                          {"h", m.h},
                          {"a", m.a},
                          {"kv_heads", m.kv_heads},
                          {"ffn", m.ffn},
                          {"tp", m.tp},
                          {"dropout", m.dropout},
                          {"attention", m.attention},
                          {"timer", m.timer},
                          {"mode", m.mode},
                          {"warmup", m.warmup},
                          {"reps", m.reps},
                          {"dropped_records", m.dropped_records},
                          {"unattributed_kernel_ms", m.unattributed_kernel_ms},
                          {"warnings", m.warnings}};
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  const std::vector<Column> written = written_columns(file);
  for (const CostRow &row : file.rows) {
    nlohmann::ordered_json layer = nlohmann::ordered_json::object();
    for (const Column &column : written) {
      const std::string key(column.name);
      if (contains(row.absent_columns, column.name))
        continue;
      std::visit(
          [&](auto member) {
            using M = decltype(member);
            if constexpr (std::is_same_v<M, std::monostate>) {
              // The version is a top-level field in JSON.
            } else if constexpr (std::is_same_v<M, Rational CostRow::*>) {
              layer[key] = time_json(row.*member);
            } else {
              layer[key] = row.*member;
            }
          },
          column.member);
    }
    layers.push_back(std::move(layer));
  }
  document["layers"] = std::move(layers);
  document["model_level"] = {{"embedding", nlohmann::ordered_json::object()},
                             {"head_loss", nlohmann::ordered_json::object()},
                             {"optimizer_step_ms", file.optimizer_step_ms}};
  return document.dump(2) + "\n";
}

} // namespace ppsim
