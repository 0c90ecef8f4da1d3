#include "costs/microbatch_sizes.h"

#include "base/assert.h"
#include "base/error.h"
#include "costs/cost_columns.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

namespace ppsim {
namespace {

/// Where `size` falls between sizes `low` and `high`: (high - size, size - low) over high - low.
struct Weights {
  std::int64_t low_weight, high_weight, span;
};

Rational between(Rational low, Rational high, const Weights &w) {
  return (low * Rational{w.low_weight, 1} + high * Rational{w.high_weight, 1}) / w.span;
}

double between(double low, double high, const Weights &w) {
  return (low * static_cast<double>(w.low_weight) + high * static_cast<double>(w.high_weight)) /
         static_cast<double>(w.span);
}

/// What the metadata says of the model and the machine, where both files say it: another
/// sequence length, width or GPU is another model, not another microbatch size.
void check_same_setting(const CostFile &low, const CostFile &high) {
  const CostMetadata &a = low.metadata;
  const CostMetadata &b = high.metadata;
  // `compared`: both files set the field (shape fields are 0 and the device empty when unset).
  const auto differ = [&](const char *what, const auto &x, const auto &y, bool compared) {
    if (compared && x != y) {
      throw Error(high.source_name, 0, "",
                  fmt::format("was profiled with {} = {}, {} with {} = {}: files at several "
                              "microbatch sizes differ in the size only",
                              what, y, low.source_name, what, x));
    }
  };
  differ("s", a.s, b.s, a.s > 0 && b.s > 0);
  differ("h", a.h, b.h, a.h > 0 && b.h > 0);
  differ("a", a.a, b.a, a.a > 0 && b.a > 0);
  differ("ffn", a.ffn, b.ffn, a.ffn > 0 && b.ffn > 0);
  differ("device", a.device, b.device, !a.device.empty() && !b.device.empty());
  differ("tp", a.tp, b.tp, true);
  differ("dtype", a.dtype, b.dtype, true);
  differ("attention", a.attention, b.attention, true);
}

/// Throws unless the two files describe the same layers with the same columns and values.
void check_same_model(const CostFile &low, const CostFile &high) {
  check_same_setting(low, high);
  if (low.rows.size() != high.rows.size()) {
    throw Error(high.source_name, 0, "",
                fmt::format("has {} layers, {} has {}: files of one model at several microbatch "
                            "sizes hold the same layers",
                            high.rows.size(), low.source_name, low.rows.size()));
  }
  for (std::size_t i = 0; i < low.rows.size(); ++i) {
    const CostRow &a = low.rows[i];
    const CostRow &b = high.rows[i];
    if (a.layer_name != b.layer_name || a.layer_type != b.layer_type) {
      throw Error(high.source_name, 0, "",
                  fmt::format("layer {} is {} ({}), {} has {} ({}): files of one model at "
                              "several microbatch sizes hold the same layers",
                              i, b.layer_name, b.layer_type, low.source_name, a.layer_name,
                              a.layer_type));
    }
    // A value measured at one size only has nothing to interpolate with.
    for (const CostRow *row : {&a, &b}) {
      const CostRow &other = row == &a ? b : a;
      for (const std::string &column : row->absent_columns) {
        if (!detail::contains(other.absent_columns, column)) {
          const CostFile &without = row == &a ? low : high;
          const CostFile &with = row == &a ? high : low;
          throw Error(without.source_name, 0, "",
                      fmt::format("layer {} has no {}, which {} measures: interpolating "
                                  "between microbatch sizes needs it at both",
                                  i, column, with.source_name));
        }
      }
    }
  }
  for (const detail::Column &column : detail::columns()) {
    if (low.has_column(column.name) != high.has_column(column.name)) {
      const CostFile &with = low.has_column(column.name) ? low : high;
      const CostFile &without = low.has_column(column.name) ? high : low;
      throw Error(without.source_name, 0, "",
                  fmt::format("has no column {}, which {} has: interpolating between microbatch "
                              "sizes needs the same columns",
                              column.name, with.source_name));
    }
  }
}

CostRow interpolated_row(const CostRow &low, const CostRow &high, const Weights &w) {
  CostRow row = low;
  for (const detail::Column &column : detail::columns()) {
    std::visit(
        [&](auto member) {
          using Member = decltype(member);
          if constexpr (std::is_same_v<Member, Rational CostRow::*> ||
                        std::is_same_v<Member, double CostRow::*>) {
            row.*member = between(low.*member, high.*member, w);
          } else if constexpr (std::is_same_v<Member, std::uint64_t CostRow::*>) {
            if (member == &CostRow::n_samples) {
              row.*member = std::min(low.*member, high.*member); // what both rest on
            } else {
              row.*member = static_cast<std::uint64_t>(std::llround(between(
                  static_cast<double>(low.*member), static_cast<double>(high.*member), w)));
            }
          }
        },
        column.member);
  }
  return row; // absent where both are (check_same_model): defaults interpolate to defaults
}

} // namespace

CostFile cost_file_at_size(const std::vector<CostFile> &files, std::int64_t size) {
  PPSIM_ASSERT(!files.empty() && size > 0);
  std::vector<const CostFile *> by_size;
  for (const CostFile &file : files) {
    if (file.metadata.b <= 0) {
      throw Error(file.source_name, 0, "",
                  "records no microbatch size (metadata \"b\": CSV files have none, ppsim "
                  "profile import records it with --batch): cost files at several sizes are "
                  "JSON files that record it");
    }
    by_size.push_back(&file);
  }
  std::sort(by_size.begin(), by_size.end(), [](const CostFile *a, const CostFile *b) {
    return a->metadata.b < b->metadata.b;
  });
  for (std::size_t i = 1; i < by_size.size(); ++i) {
    if (by_size[i]->metadata.b == by_size[i - 1]->metadata.b) {
      throw Error(by_size[i]->source_name, 0, "",
                  fmt::format("was profiled at microbatch size {}, as {} was: give one file per "
                              "size",
                              by_size[i]->metadata.b, by_size[i - 1]->source_name));
    }
    check_same_model(*by_size[i - 1], *by_size[i]);
  }
  const auto high = std::lower_bound(
      by_size.begin(), by_size.end(), size,
      [](const CostFile *file, std::int64_t b) { return file->metadata.b < b; });
  if (high != by_size.end() && (*high)->metadata.b == size)
    return **high;
  if (high == by_size.begin() || high == by_size.end()) {
    std::vector<std::int64_t> sizes;
    for (const CostFile *file : by_size)
      sizes.push_back(file->metadata.b);
    throw Error("", 0, "",
                fmt::format("microbatch size {} is outside the sizes the cost files were profiled "
                            "at ({}): kernels are not linear in the size, so ppsim interpolates "
                            "between measured sizes and does not extrapolate; profile at {}",
                            size, fmt::join(sizes, ", "), size));
  }
  const CostFile &low = **(high - 1);
  const CostFile &upper = **high;
  const Weights w{upper.metadata.b - size, size - low.metadata.b,
                  upper.metadata.b - low.metadata.b};
  CostFile result = low;
  try {
    for (std::size_t i = 0; i < result.rows.size(); ++i)
      result.rows[i] = interpolated_row(low.rows[i], upper.rows[i], w);
  } catch (const std::overflow_error &) {
    throw Error(low.source_name, 0, "",
                fmt::format("a time interpolated with {} at microbatch size {} has no exact form "
                            "within 64 bits",
                            upper.source_name, size));
  }
  result.optimizer_step_ms = between(low.optimizer_step_ms, upper.optimizer_step_ms, w);
  result.metadata.b = size;
  result.source_name = fmt::format("{} and {} at microbatch size {}", low.source_name,
                                   upper.source_name, size);
  return result;
}

} // namespace ppsim
