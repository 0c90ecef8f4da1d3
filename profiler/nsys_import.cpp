#include "profiler/nsys_import.h"

#include "base/error.h"
#include "base/text_file.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <set>
#include <tuple>

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

// NCCL's NVTX ranges: domain "NCCL", names "ncclAllReduce", "ncclSend"...
bool is_communication_range(std::string_view name) {
  const std::string_view bare = strip_domain(name);
  const auto starts_nccl = [](std::string_view text) {
    return text.size() >= 4 && (text[0] == 'n' || text[0] == 'N') &&
           (text[1] == 'c' || text[1] == 'C') && (text[2] == 'c' || text[2] == 'C') &&
           (text[3] == 'l' || text[3] == 'L');
  };
  return starts_nccl(bare) || starts_nccl(name);
}

// Where a range ran, for nesting: its id and ancestors (":1:4"), else its thread and CPU time.
struct RangePlace {
  std::string id, stack, thread;
  std::uint64_t start = 0, end = 0;
  std::string name;
};

// Counts and nanoseconds up to 2^53 (104 days; exact in a double): sums and means stay exact.
constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 53;

std::uint64_t parse_count(std::string_view text, const std::string &source, int line,
                          std::string_view column) {
  std::uint64_t value = 0;
  double as_double = 0;
  const auto too_large = [&]() {
    return Error(source, line, std::string(column),
                 fmt::format("{} is too large (at most 2^53)", text));
  };
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!text.empty() && error == std::errc() && end == text.data() + text.size()) {
    if (value > kMaxCount)
      throw too_large();
    return value;
  }
  // Averages and medians may be printed with decimals.
  const auto [end2, error2] = std::from_chars(text.data(), text.data() + text.size(), as_double);
  if (!text.empty() && error2 == std::errc() && end2 == text.data() + text.size() &&
      as_double >= 0) {
    if (!(as_double <= static_cast<double>(kMaxCount)))
      throw too_large();
    return static_cast<std::uint64_t>(as_double + 0.5);
  }
  throw Error(source, line, std::string(column),
              fmt::format("expected a non-negative number, got \"{}\"", cut_for_message(text)));
}

} // namespace

NsysImport parse_nsys_projection_csv(std::string_view text, const std::string &source) {
  TextLines lines(text);
  NsysImport result;
  std::vector<std::string> header;
  // Columns by name; the name column is "Range" in the summary, "Name" in the trace.
  std::map<std::string, std::size_t, std::less<>> column;
  const auto has = [&](std::string_view name) { return column.count(name) > 0; };
  const auto count = [&](const std::vector<std::string_view> &fields, std::string_view name,
                         int line) {
    return parse_count(fields[column.find(name)->second], source, line, name);
  };
  std::vector<std::uint64_t> starts; // of result.instances
  std::vector<RangePlace> places;    // of result.instances
  std::vector<RangePlace> communication;
  std::set<std::string> communication_names;
  int line_number = 0;
  while (const std::optional<std::string_view> raw = lines.next()) {
    ++line_number;
    const std::string_view line = *raw;
    if (line.find_first_not_of(" \r") == std::string_view::npos)
      continue;
    const auto fields = split_csv(line);
    if (header.empty()) {
      // nsys may print a banner before the table; the header is the line naming the ranges.
      const bool summary = std::find(fields.begin(), fields.end(), "Range") != fields.end();
      const bool trace =
          std::find(fields.begin(), fields.end(), "Projected Duration (ns)") != fields.end();
      if (!summary && !trace)
        continue;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        header.emplace_back(fields[i]);
        column.emplace(std::string(fields[i]), i);
      }
      result.per_instance = !summary;
      const std::vector<std::string_view> needed =
          summary ? std::vector<std::string_view>{"Total Proj Time (ns)", "Range Instances"}
                  : std::vector<std::string_view>{"Name", "Projected Start (ns)"};
      for (const std::string_view name : needed) {
        if (!has(name)) {
          throw Error(source, line_number, "",
                      fmt::format("missing column '{}' (expected `nsys stats -r {} --format csv`)",
                                  name, summary ? "nvtx_gpu_proj_sum" : "nvtx_gpu_proj_trace"));
        }
      }
      continue;
    }
    if (fields.size() != header.size()) {
      throw Error(source, line_number, "",
                  fmt::format("expected {} fields, got {}", header.size(), fields.size()));
    }
    const std::string_view name =
        fields[column.find(result.per_instance ? "Name" : "Range")->second];
    const auto phase = parse_range_name(strip_domain(name));
    // Where the range ran (trace rows): for telling NCCL ranges nested in a phase.
    const auto place = [&] {
      RangePlace at;
      at.name = std::string(strip_domain(name));
      if (has("RangeId"))
        at.id = std::string(fields[column.find("RangeId")->second]);
      if (has("RangeStack"))
        at.stack = std::string(fields[column.find("RangeStack")->second]);
      if (has("TID"))
        at.thread = std::string(fields[column.find("TID")->second]);
      if (has("PID"))
        at.thread += "/" + std::string(fields[column.find("PID")->second]);
      if (has("Orig Start (ns)") && has("Orig Duration (ns)")) {
        at.start = count(fields, "Orig Start (ns)", line_number);
        at.end = at.start + count(fields, "Orig Duration (ns)", line_number);
      }
      return at;
    };
    if (!phase) {
      ++result.ignored_ranges;
      if (is_communication_range(name)) {
        ++result.communication_ranges;
        communication_names.insert(std::string(strip_domain(name)));
        if (result.per_instance)
          communication.push_back(place());
      }
      continue;
    }
    if (result.per_instance) {
      PhaseMetrics instance;
      instance.phase = *phase;
      instance.busy_union_ns = instance.span_ns = instance.kernel_sum_ns =
          count(fields, "Projected Duration (ns)", line_number);
      if (has("NumGPUOps"))
        instance.n_kernels = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(count(fields, "NumGPUOps", line_number), UINT32_MAX));
      result.instances.push_back(instance);
      starts.push_back(count(fields, "Projected Start (ns)", line_number));
      places.push_back(place());
      continue;
    }
    NsysRange range;
    range.phase = *phase;
    range.total_projection_ns = count(fields, "Total Proj Time (ns)", line_number);
    range.instances = count(fields, "Range Instances", line_number);
    if (range.instances == 0) {
      throw Error(source, line_number, "Range Instances", "expected at least one instance");
    }
    range.median_ns = has("Proj Med (ns)") ? count(fields, "Proj Med (ns)", line_number)
                                           : range.total_projection_ns / range.instances;
    range.min_ns =
        has("Proj Min (ns)") ? count(fields, "Proj Min (ns)", line_number) : range.median_ns;
    range.max_ns =
        has("Proj Max (ns)") ? count(fields, "Proj Max (ns)", line_number) : range.median_ns;
    result.ranges.push_back(range);
  }
  if (header.empty()) {
    throw Error(source, 0, "",
                "no table of NVTX ranges (expected `nsys stats -r nvtx_gpu_proj_sum` or "
                "`-r nvtx_gpu_proj_trace`, `--format csv`)");
  }
  // Repetitions in projected start order (a range pushed once per iteration).
  std::vector<std::size_t> order(result.instances.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return starts[a] < starts[b]; });
  std::vector<PhaseId *> in_start_order;
  for (const std::size_t i : order)
    in_start_order.push_back(&result.instances[i].phase);
  number_repetitions(in_start_order, source);
  // NCCL ranges nested in a phase instance: its projection includes their kernels.
  const bool by_stack = has("RangeId") && has("RangeStack");
  const bool by_time = has("Orig Start (ns)") && has("Orig Duration (ns)");
  const auto nested = [&](const RangePlace &inner, const RangePlace &outer) {
    if (by_stack && !outer.id.empty()) {
      // RangeStack lists the ids of the range and its ancestors, ":1:4".
      const std::string token = ":" + outer.id;
      for (std::size_t at = inner.stack.find(token); at != std::string::npos;
           at = inner.stack.find(token, at + 1)) {
        const std::size_t after = at + token.size();
        if (after == inner.stack.size() || inner.stack[after] == ':')
          return true;
      }
      return false;
    }
    return by_time && inner.thread == outer.thread && outer.start <= inner.start &&
           inner.end <= outer.end && inner.start < inner.end;
  };
  std::map<std::pair<std::uint16_t, Pass>, std::pair<std::size_t, std::set<std::string>>> affected;
  for (std::size_t i = 0; i < result.instances.size(); ++i) {
    for (const RangePlace &comm : communication) {
      if (!nested(comm, places[i]))
        continue;
      ++result.ranges_with_communication;
      auto &[instances, names] =
          affected[{result.instances[i].phase.layer, result.instances[i].phase.pass}];
      ++instances;
      for (const RangePlace &other : communication)
        if (nested(other, places[i]))
          names.insert(other.name);
      break;
    }
  }
  for (const auto &[key, what] : affected) {
    std::string names;
    for (const std::string &name : what.second)
      names += (names.empty() ? "" : ", ") + name;
    result.warnings.push_back(fmt::format("layer {} {}: {} range{} with NCCL inside ({}): nsys "
                                          "projects every GPU operation launched in a range, so "
                                          "the communication kernels count as layer time "
                                          "(docs/profiler.md, \"Import a PyTorch trace\")",
                                          key.first, pass_code(key.second), what.first,
                                          what.first == 1 ? "" : "s", names));
  }
  if (!result.per_instance && !communication_names.empty()) {
    std::string names;
    for (const std::string &name : communication_names)
      names += (names.empty() ? "" : ", ") + name;
    result.warnings.push_back(
        fmt::format("the report has NCCL ranges ({}): where one ran inside a layer range its "
                    "kernels count as layer time; "
                    "the per-instance report (nvtx_gpu_proj_trace) names the ranges",
                    names));
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
    const auto mean_ns =
        totals.instances == 0
            ? std::int64_t{0}
            : static_cast<std::int64_t>((totals.weighted_median + totals.instances / 2) /
                                        totals.instances);
    pass.busy.median_ms = normalized({mean_ns, 1'000'000});
    pass.busy.p10_ms = normalized({static_cast<std::int64_t>(totals.min), 1'000'000});
    pass.busy.p90_ms = normalized({static_cast<std::int64_t>(totals.max), 1'000'000});
    pass.busy.samples = totals.instances; // 64-bit, never clamped (docs/reliability.md)
    passes.push_back(pass);
  }
  return passes;
}

} // namespace ppsim::profiler
