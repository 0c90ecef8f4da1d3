#include "profiler/nsys_import.h"

#include "sim/error.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <libfccp/csv.h>
#include <map>
#include <optional>

namespace ppsim::profiler {
namespace {

std::string_view unquote(std::string_view field) {
  while (!field.empty() && (field.back() == '\r' || field.back() == ' '))
    field.remove_suffix(1);
  while (!field.empty() && field.front() == ' ')
    field.remove_prefix(1);
  if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
    field = field.substr(1, field.size() - 2);
  }
  return field;
}

// nsys quotes names containing commas; ppsim's names never contain one, other ranges may.
std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  bool quoted = false;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    if (i < line.size() && line[i] == '"')
      quoted = !quoted;
    if (i == line.size() || (line[i] == ',' && !quoted)) {
      fields.push_back(unquote(line.substr(start, i - start)));
      start = i + 1;
    }
  }
  return fields;
}

// Nsight prefixes push/pop ranges with their domain ("ppsim:L03.B.mb0", ":L03.B.mb0").
std::string_view strip_domain(std::string_view name) {
  const auto colon = name.rfind(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

// Counts and nanoseconds up to 2^53 (104 days; exact in a double): sums and means stay exact.
constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 53;

std::uint64_t parse_count(std::string_view text, const std::string &source, int line,
                          std::string_view column) {
  std::uint64_t value = 0;
  double as_double = 0;
  const auto too_large = [&]() {
    return Error(source, line, std::string(column), fmt::format("{} is too large (at most 2^53)", text));
  };
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!text.empty() && error == std::errc() && end == text.data() + text.size()) {
    if (value > kMaxCount) throw too_large();
    return value;
  }
  // Averages and medians may be printed with decimals.
  const auto [end2, error2] = std::from_chars(text.data(), text.data() + text.size(), as_double);
  if (!text.empty() && error2 == std::errc() && end2 == text.data() + text.size() &&
      as_double >= 0) {
    if (!(as_double <= static_cast<double>(kMaxCount))) throw too_large();
    return static_cast<std::uint64_t>(as_double + 0.5);
  }
  throw Error(source, line, std::string(column),
              fmt::format("expected a non-negative number, got \"{}\"", text));
}

} // namespace

NsysImport parse_nsys_projection_csv(std::string_view text, const std::string &source) {
  io::LineReader reader(source, text.data(), text.data() + text.size());
  NsysImport result;
  std::vector<std::string> header;
  std::optional<std::size_t> range_column, total_column, instances_column, median_column,
      min_column, max_column;
  int line_number = 0;
  while (char *raw = reader.next_line()) {
    ++line_number;
    const std::string_view line(raw);
    if (line.find_first_not_of(" \r") == std::string_view::npos)
      continue;
    const auto fields = split_csv(line);
    if (header.empty()) {
      // nsys may print a banner before the table; the header is the line naming "Range".
      if (std::find(fields.begin(), fields.end(), "Range") == fields.end())
        continue;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        header.emplace_back(fields[i]);
        if (fields[i] == "Range")
          range_column = i;
        if (fields[i] == "Total Proj Time (ns)")
          total_column = i;
        if (fields[i] == "Range Instances")
          instances_column = i;
        if (fields[i] == "Proj Med (ns)")
          median_column = i;
        if (fields[i] == "Proj Min (ns)")
          min_column = i;
        if (fields[i] == "Proj Max (ns)")
          max_column = i;
      }
      for (const auto &[column, name] : {std::pair{total_column, "Total Proj Time (ns)"},
                                         std::pair{instances_column, "Range Instances"}}) {
        if (!column) {
          throw Error(source, line_number, "",
                      fmt::format("missing column '{}' (expected `nsys stats -r nvtx_gpu_proj_sum "
                                  "--format csv`)",
                                  name));
        }
      }
      continue;
    }
    if (fields.size() != header.size()) {
      throw Error(source, line_number, "",
                  fmt::format("expected {} fields, got {}", header.size(), fields.size()));
    }
    const auto phase = parse_range_name(strip_domain(fields[*range_column]));
    if (!phase) {
      ++result.ignored_ranges;
      continue;
    }
    NsysRange range;
    range.phase = *phase;
    range.total_projection_ns =
        parse_count(fields[*total_column], source, line_number, "Total Proj Time (ns)");
    range.instances =
        parse_count(fields[*instances_column], source, line_number, "Range Instances");
    if (range.instances == 0) {
      throw Error(source, line_number, "Range Instances", "expected at least one instance");
    }
    range.median_ns =
        median_column ? parse_count(fields[*median_column], source, line_number, "Proj Med (ns)")
                      : range.total_projection_ns / range.instances;
    range.min_ns = min_column
                       ? parse_count(fields[*min_column], source, line_number, "Proj Min (ns)")
                       : range.median_ns;
    range.max_ns = max_column
                       ? parse_count(fields[*max_column], source, line_number, "Proj Max (ns)")
                       : range.median_ns;
    result.ranges.push_back(range);
  }
  if (header.empty()) {
    throw Error(source, 0, "",
                "no table with a 'Range' column (expected `nsys stats -r "
                "nvtx_gpu_proj_sum --format csv`)");
  }
  return result;
}

std::vector<PassSummary> nsys_pass_summaries(const NsysImport &import) {
  __extension__ using Int128 = __int128;
  struct Totals {
    Int128 weighted_median = 0; // median x instances summed: up to 2^106
    std::uint64_t instances = 0, min = UINT64_MAX, max = 0;
  };
  std::map<std::pair<std::uint16_t, Pass>, Totals> grouped;
  for (const NsysRange &range : import.ranges) {
    Totals &totals = grouped[{range.phase.layer, range.phase.pass}];
    totals.weighted_median += Int128{range.median_ns} * range.instances;
    totals.instances += range.instances;
    totals.min = std::min(totals.min, range.min_ns);
    totals.max = std::max(totals.max, range.max_ns);
  }
  std::vector<PassSummary> passes;
  for (const auto &[key, totals] : grouped) {
    PassSummary pass;
    pass.layer = key.first;
    pass.pass = key.second;
    // The instance-weighted mean of the medians, to the nearest ns (at most 2^53 ns).
    const auto mean_ns = totals.instances == 0
                             ? std::int64_t{0}
                             : static_cast<std::int64_t>((totals.weighted_median + totals.instances / 2) /
                                                         totals.instances);
    pass.busy.median_ms = normalized({mean_ns, 1'000'000});
    pass.busy.p10_ms = normalized({static_cast<std::int64_t>(totals.min), 1'000'000});
    pass.busy.p90_ms = normalized({static_cast<std::int64_t>(totals.max), 1'000'000});
    pass.busy.samples = static_cast<int>(std::min<std::uint64_t>(totals.instances, INT32_MAX));
    passes.push_back(pass);
  }
  return passes;
}

} // namespace ppsim::profiler
