// The CSV form of the cost file (docs/profiler.md, "The cost file"): a header of column names,
// then one row per layer; an empty cell is an absent value.
#include "costs/cost_file.h"

#include "base/error.h"
#include "base/text_file.h"
#include "costs/cost_columns.h"

#include <fmt/format.h>
#include <type_traits>

namespace ppsim {
namespace {

using detail::Column;
using detail::Location;

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(
        trim(line.substr(start, comma == std::string_view::npos ? comma : comma - start)));
    if (comma == std::string_view::npos)
      return fields;
    start = comma + 1;
  }
}

// The header's columns, in file order; `present` gets their names.
std::vector<const Column *> read_header(const std::vector<std::string_view> &fields,
                                        std::vector<std::string> &present, Required required,
                                        const Location &where) {
  std::vector<const Column *> header;
  for (const std::string_view name : fields) {
    const Column *column = detail::find_column(name);
    if (column == nullptr)
      detail::unknown_column(std::string(name), where);
    if (detail::contains(present, name))
      where.fail(fmt::format("duplicate column '{}'", name));
    header.push_back(column);
    present.emplace_back(name);
  }
  if (const auto missing = detail::missing_required(present, required))
    throw Error(where.source, where.line, "", fmt::format("missing column '{}'", *missing));
  return header;
}

CostRow read_row(const std::vector<const Column *> &header,
                 const std::vector<std::string_view> &fields, Required required,
                 const std::string &source, int line_number) {
  if (fields.size() != header.size()) {
    throw Error(source, line_number, "",
                fmt::format("expected {} fields, got {}", header.size(), fields.size()));
  }
  CostRow row;
  std::vector<std::string> present;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::string_view name = header[i]->name;
    // An empty cell is an absent value (docs/profiler.md, "The cost file"); the identity never is.
    if (fields[i].empty() && !detail::is_identity(name)) {
      row.absent_columns.emplace_back(name);
      continue;
    }
    detail::assign(row, *header[i], fields[i], Location{source, line_number, std::string(name)});
    present.emplace_back(name);
  }
  // A file of whole backwards only (no B or W columns) needs each layer's whole backward.
  std::vector<std::string> columns;
  for (const Column *column : header)
    columns.emplace_back(column->name);
  const bool whole_backward_required =
      required == Required::values && detail::measures_fused_backward_only(columns);
  for (const std::string &name : row.absent_columns) {
    if (detail::is_required(name, required) ||
        (whole_backward_required && name == "bwd_total_ms")) {
      throw Error(
          source, line_number, name,
          fmt::format("layer {} has no value (an empty cell: not measured); a simulation needs one",
                      row.layer_id));
    }
  }
  detail::complete_row(row, present);
  return row;
}

std::string cell_text(const CostFile &file, const CostRow &row, const Column &column) {
  return std::visit(
      [&](auto member) -> std::string {
        using M = decltype(member);
        if constexpr (std::is_same_v<M, std::monostate>) {
          return std::to_string(file.schema_version);
        } else if constexpr (std::is_same_v<M, std::string CostRow::*>) {
          return row.*member;
        } else if constexpr (std::is_same_v<M, Rational CostRow::*>) {
          return format_rational(row.*member);
        } else if constexpr (std::is_same_v<M, double CostRow::*>) {
          return fmt::format("{}", row.*member);
        } else {
          return std::to_string(row.*member);
        }
      },
      column.member);
}

} // namespace

CostFile parse_cost_csv(std::string_view text, const std::string &source, LayerIds ids,
                        Required required) {
  CostFile file;
  file.source_name = source;
  TextLines lines(text);
  std::vector<const Column *> header;
  int line_number = 0;
  while (const std::optional<std::string_view> raw = lines.next()) {
    ++line_number;
    const std::string_view line = trim(*raw);
    if (line.empty() || line.front() == '#')
      continue;
    const std::vector<std::string_view> fields = split_fields(line);
    if (header.empty()) {
      std::vector<std::string> present;
      header = read_header(fields, present, required, Location{source, line_number, ""});
      detail::note_columns(file, present);
      continue;
    }
    CostRow row = read_row(header, fields, required, source, line_number);
    detail::check_layer_id(row, file.rows, ids, Location{source, line_number, "layer_id"});
    file.rows.push_back(std::move(row));
  }
  detail::check_rows(file);
  return file;
}

std::string write_cost_csv(const CostFile &file) {
  std::string text;
  const std::vector<Column> written = detail::written_columns(file);
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
      if (!detail::contains(row.absent_columns, column.name)) // else an empty cell
        text += cell_text(file, row, column);
    }
    text += '\n';
  }
  return text;
}

} // namespace ppsim
