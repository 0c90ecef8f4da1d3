// The JSON form of the cost file (docs/profiler.md, "The cost file"): {"schema_version": 1,
// "metadata": {...}, "layers": [...], "model_level": {...}}; a missing or null key is absent.
#include "costs/cost_file.h"

#include "base/decimal.h"
#include "base/error.h"
#include "costs/cost_columns.h"
#include "costs/json_shown.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <type_traits>

namespace ppsim {
namespace {

using detail::Column;
using detail::Location;

using MetadataMember =
    std::variant<std::string CostMetadata::*, std::int64_t CostMetadata::*, bool CostMetadata::*,
                 double CostMetadata::*, std::vector<std::string> CostMetadata::*>;

struct MetadataField {
  const char *key;
  MetadataMember member;
};

// The "metadata" object, in the order it is written.
constexpr MetadataField kMetadataFields[] = {
    {"device", &CostMetadata::device},
    {"sm_count", &CostMetadata::sm_count},
    {"clock_khz", &CostMetadata::clock_khz},
    {"driver", &CostMetadata::driver},
    {"cuda_runtime", &CostMetadata::cuda_runtime},
    {"cupti_api_version", &CostMetadata::cupti_api_version},
    {"dtype", &CostMetadata::dtype},
    {"b", &CostMetadata::b},
    {"s", &CostMetadata::s},
    {"h", &CostMetadata::h},
    {"a", &CostMetadata::a},
    {"kv_heads", &CostMetadata::kv_heads},
    {"ffn", &CostMetadata::ffn},
    {"tp", &CostMetadata::tp},
    {"dropout", &CostMetadata::dropout},
    {"attention", &CostMetadata::attention},
    {"timer", &CostMetadata::timer},
    {"mode", &CostMetadata::mode},
    {"warmup", &CostMetadata::warmup},
    {"reps", &CostMetadata::reps},
    {"dropped_records", &CostMetadata::dropped_records},
    {"unattributed_kernel_ms", &CostMetadata::unattributed_kernel_ms},
    {"warnings", &CostMetadata::warnings},
};

CostMetadata read_metadata(const nlohmann::json &metadata, const std::string &source) {
  CostMetadata result;
  if (!metadata.is_object())
    throw Error(source, 0, "metadata", "expected an object");
  for (const MetadataField &field : kMetadataFields) {
    const auto found = metadata.find(field.key);
    if (found == metadata.end() || found->is_null())
      continue;
    std::visit(
        [&](auto member) {
          try {
            found->get_to(result.*member);
          } catch (const nlohmann::json::exception &) {
            throw Error(source, 0, fmt::format("metadata.{}", field.key),
                        fmt::format("unexpected value {}", found->dump()));
          }
        },
        field.member);
  }
  return result;
}

nlohmann::ordered_json metadata_json(const CostMetadata &metadata) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const MetadataField &field : kMetadataFields)
    std::visit([&](auto member) { object[field.key] = metadata.*member; }, field.member);
  return object;
}

// A JSON value as the text a CSV cell would hold, for detail::assign.
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
      where.fail(fmt::format("expected a finite number, got {}", shown_json(value)));
    // A finite number with no exact decimal form (1e300) reaches the field's own range check.
    const auto exact = rational_from_double(number);
    return exact ? format_rational(*exact) : value.dump();
  }
  where.fail(fmt::format("expected a number or name, got {}", shown_json(value)));
}

int line_of_byte(std::string_view text, std::size_t byte) {
  byte = std::min(byte, text.size());
  return 1 +
         static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(byte), '\n'));
}

nlohmann::json parse_document(std::string_view text, const std::string &source) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
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
}

// One layer object; `present` gets the keys it has a value for.
CostRow read_layer(const nlohmann::json &layer, const std::string &path, Required required,
                   const std::string &source, std::vector<std::string> &present) {
  if (!layer.is_object())
    throw Error(source, 0, path, "expected an object");
  CostRow row;
  for (const auto &[key, value] : layer.items()) {
    const Location where{source, 0, fmt::format("{}.{}", path, key)};
    const Column *column = detail::find_column(key);
    if (column == nullptr)
      detail::unknown_column(key, Location{source, 0, path});
    if (value.is_null() && key != "layer_id")
      continue; // absent, as an empty CSV cell
    detail::assign(row, *column, json_value_text(value, where), where);
    present.push_back(key);
  }
  present.emplace_back("schema_version");
  if (const auto missing = detail::missing_required(present, required))
    throw Error(source, 0, path, fmt::format("missing field '{}'", *missing));
  detail::complete_row(row, present);
  return row;
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

nlohmann::ordered_json layer_json(const CostRow &row, const std::vector<Column> &written) {
  nlohmann::ordered_json layer = nlohmann::ordered_json::object();
  for (const Column &column : written) {
    if (detail::contains(row.absent_columns, column.name))
      continue;
    const std::string key(column.name);
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
  return layer;
}

} // namespace

CostFile parse_cost_json(std::string_view text, const std::string &source, LayerIds ids,
                         Required required) {
  const nlohmann::json document = parse_document(text, source);
  if (!document.is_object())
    throw Error(source, 1, "", "expected a JSON object at the top level");
  CostFile file;
  file.source_name = source;
  const auto version = document.find("schema_version");
  if (version == document.end())
    throw Error(source, 0, "", "missing field 'schema_version'");
  if (!version->is_number_integer()) {
    throw Error(source, 0, "schema_version",
                fmt::format("expected an integer, got {}", shown_json(*version)));
  }
  detail::check_version(version->get<std::int64_t>(), Location{source, 0, "schema_version"});
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
    const std::string path = fmt::format("layers[{}]", index);
    std::vector<std::string> present;
    CostRow row = read_layer((*layers)[index], path, required, source, present);
    detail::check_layer_id(row, file.rows, ids, Location{source, 0, path + ".layer_id"});
    detail::note_columns(file, present);
    row_columns.push_back(std::move(present));
    file.rows.push_back(std::move(row));
  }
  // Every layer gives B and W, or (a whole-backward file) none does: W = 0 on some layers only
  // would let a split schedule run them with no W to defer.
  if (required == Required::values && !detail::measures_fused_backward_only(file.only_columns))
    for (std::size_t index = 0; index < file.rows.size(); ++index)
      if (detail::measures_fused_backward_only(row_columns[index]))
        throw Error(source, 0, fmt::format("layers[{}]", index),
                    "has bwd_total_ms but no bwd_input_ms or bwd_weight_ms, which other layers "
                    "have: give the B/W split for every layer or for none");
  // A column some layer has and another lacks is absent in the other (written back so).
  for (std::size_t index = 0; index < file.rows.size(); ++index)
    for (const std::string &name : file.only_columns)
      if (!detail::contains(row_columns[index], name))
        file.rows[index].absent_columns.push_back(name);
  detail::check_rows(file);
  return file;
}

std::string write_cost_json(const CostFile &file) {
  nlohmann::ordered_json document;
  document["schema_version"] = file.schema_version;
  document["metadata"] = metadata_json(file.metadata);
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  const std::vector<Column> written = detail::written_columns(file);
  for (const CostRow &row : file.rows)
    layers.push_back(layer_json(row, written));
  document["layers"] = std::move(layers);
  document["model_level"] = {{"embedding", nlohmann::ordered_json::object()},
                             {"head_loss", nlohmann::ordered_json::object()},
                             {"optimizer_step_ms", file.optimizer_step_ms}};
  return document.dump(2) + "\n";
}

} // namespace ppsim
