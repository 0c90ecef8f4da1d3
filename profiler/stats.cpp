#include "profiler/stats.h"
#include "base/index.h"

#include <charconv>
#include <set>

#include "base/assert.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace ppsim::profiler {
namespace {

Rational ns_to_ms(std::uint64_t ns) {
  return normalized({static_cast<std::int64_t>(ns), 1'000'000});
}

// Nearest-rank percentile: the smallest sample with at least p% of samples at or below it.
std::uint64_t nearest_rank(const std::vector<std::uint64_t> &sorted, int percent) {
  const std::size_t rank = (sorted.size() * at(percent) + 99) / 100;
  return sorted[std::max<std::size_t>(rank, 1) - 1];
}

// A pass's median and percentiles into its three columns.
void set_times(const TimeSummary &busy, Rational &median, Rational &p10, Rational &p90) {
  median = busy.median_ms;
  p10 = busy.p10_ms;
  p90 = busy.p90_ms;
}

} // namespace

TimeSummary summarize_ns(std::vector<std::uint64_t> samples_ns) {
  PPSIM_ASSERT(!samples_ns.empty());
  std::sort(samples_ns.begin(), samples_ns.end());
  const std::size_t n = samples_ns.size();
  TimeSummary summary;
  summary.samples = static_cast<std::uint64_t>(n);
  if (n % 2 == 1) {
    summary.median_ms = ns_to_ms(samples_ns[n / 2]);
  } else {
    const std::uint64_t sum = samples_ns[n / 2 - 1] + samples_ns[n / 2];
    summary.median_ms = normalized({static_cast<std::int64_t>(sum), 2'000'000});
  }
  summary.p10_ms = ns_to_ms(nearest_rank(samples_ns, 10));
  summary.p90_ms = ns_to_ms(nearest_rank(samples_ns, 90));
  return summary;
}

std::vector<PassSummary> summarize_passes(const std::vector<PhaseMetrics> &phases, int warmup) {
  struct Samples {
    std::vector<std::uint64_t> busy;
    std::uint64_t max_gap = 0;
  };
  std::map<std::pair<std::uint16_t, Pass>, Samples> grouped;
  for (const PhaseMetrics &phase : phases) {
    if (phase.phase.repetition < warmup)
      continue; // lazy loading, cuBLASLt heuristics
    Samples &samples = grouped[{phase.phase.layer, phase.phase.pass}];
    samples.busy.push_back(phase.busy_union_ns);
    samples.max_gap = std::max(samples.max_gap, phase.span_ns - phase.busy_union_ns);
  }
  std::vector<PassSummary> result;
  for (auto &[key, samples] : grouped) {
    result.push_back(
        {key.first, key.second, summarize_ns(std::move(samples.busy)), samples.max_gap});
  }
  return result;
}

void apply_measurements(std::vector<CostRow> &rows, const std::vector<PassSummary> &passes,
                        const std::string &source) {
  for (const PassSummary &pass : passes) {
    if (pass.layer >= rows.size())
      continue;
    CostRow &row = rows[pass.layer];
    const TimeSummary &busy = pass.busy;
    switch (pass.pass) {
    case Pass::forward:
      set_times(busy, row.fwd_ms, row.fwd_ms_p10, row.fwd_ms_p90);
      row.n_samples = busy.samples;
      break;
    case Pass::backward_input:
      set_times(busy, row.bwd_input_ms, row.bwd_input_ms_p10, row.bwd_input_ms_p90);
      break;
    case Pass::backward_weight:
      set_times(busy, row.bwd_weight_ms, row.bwd_weight_ms_p10, row.bwd_weight_ms_p90);
      break;
    case Pass::backward_total:
      row.bwd_total_ms = busy.median_ms;
      break;
    case Pass::recompute_full:
      row.recompute_ms = busy.median_ms;
      break;
    case Pass::recompute_selective:
      row.recompute_selective_ms = busy.median_ms;
      break;
    }
    row.source = source;
  }
}

CostFile injected_cost_file(const std::vector<PassSummary> &passes, const std::string &source) {
  std::set<std::uint16_t> layers;
  std::set<Pass> measured;
  std::set<std::pair<std::uint16_t, Pass>> seen;
  for (const PassSummary &pass : passes) {
    layers.insert(pass.layer);
    measured.insert(pass.pass);
    seen.insert({pass.layer, pass.pass});
  }
  CostFile file;
  std::vector<CostRow> by_id(layers.empty() ? 0 : *layers.rbegin() + 1u);
  for (const std::uint16_t layer : layers) {
    CostRow &row = by_id[layer];
    row.layer_id = layer;
    row.layer_name = "layer" + std::to_string(layer);
    row.layer_type = "measured";
  }
  apply_measurements(by_id, passes, source);
  for (const std::uint16_t layer : layers)
    file.rows.push_back(by_id[layer]);
  file.only_columns = {"schema_version", "layer_id",  "layer_name",
                       "layer_type",     "n_samples", "source"};
  const auto add = [&](Pass pass, std::initializer_list<const char *> columns) {
    if (!measured.count(pass))
      return;
    file.only_columns.insert(file.only_columns.end(), columns.begin(), columns.end());
    // A layer without a pass that others have: its cells are empty (absent), never a 0 the
    // simulator would take for a measurement (docs/profiler.md, "Any CUDA program").
    for (CostRow &row : file.rows) {
      if (seen.count({static_cast<std::uint16_t>(row.layer_id), pass}))
        continue;
      row.absent_columns.insert(row.absent_columns.end(), columns.begin(), columns.end());
      file.metadata.warnings.push_back(
          fmt::format("layer {} has no {} range: its {} is left empty (absent)", row.layer_id,
                      pass_code(pass), *columns.begin()));
    }
  };
  add(Pass::forward, {"fwd_ms", "fwd_ms_p10", "fwd_ms_p90"});
  add(Pass::backward_input, {"bwd_input_ms", "bwd_input_ms_p10", "bwd_input_ms_p90"});
  add(Pass::backward_weight, {"bwd_weight_ms", "bwd_weight_ms_p10", "bwd_weight_ms_p90"});
  add(Pass::backward_total, {"bwd_total_ms"});
  add(Pass::recompute_full, {"recompute_ms"});
  add(Pass::recompute_selective, {"recompute_selective_ms"});
  return file;
}

std::string warning_lines(const CostFile &file, std::string_view prefix) {
  std::string lines;
  for (const std::string &warning : file.metadata.warnings)
    lines += fmt::format("{}: warning: {}\n", prefix, warning);
  return lines;
}

std::optional<int> launcher_rank(const std::function<const char *(const char *)> &environment) {
  for (const char *name : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char *text = environment(name);
    if (text == nullptr || *text == '\0')
      continue;
    int rank = -1;
    const std::string_view value(text);
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), rank);
    if (error == std::errc() && end == value.data() + value.size() && rank >= 0)
      return rank;
  }
  return std::nullopt;
}

std::string rank_cost_path(const std::string &path, std::optional<int> rank) {
  if (!rank)
    return path;
  const std::string number = std::to_string(*rank);
  if (const auto at = path.find("{rank}"); at != std::string::npos)
    return std::string(path).replace(at, 6, number);
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) ||
      dot == (slash == std::string::npos ? 0 : slash + 1))
    return path + ".rank" + number;
  return path.substr(0, dot) + ".rank" + number + path.substr(dot);
}

std::vector<std::string> measurement_warnings(const DecodedActivity &activity,
                                              const Attribution &attribution,
                                              const std::vector<CostRow> &rows) {
  std::vector<std::string> warnings;
  if (activity.dropped_records > 0) {
    warnings.push_back(
        fmt::format("CUPTI dropped {} records; raise the buffer size or flush more often",
                    activity.dropped_records));
  }
  if (attribution.zero_timestamp_activities > 0) {
    warnings.push_back(
        fmt::format("{} kernels have no timestamps (CUPTI device buffers exhausted); "
                    "raise CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE",
                    attribution.zero_timestamp_activities));
  }
  if (attribution.communication_kernels > 0) {
    warnings.push_back(fmt::format("{} NCCL kernels ({} ms) were left out of the layer times",
                                   attribution.communication_kernels,
                                   static_cast<double>(attribution.communication_busy_ns) / 1e6));
  }
  const std::uint64_t total = attribution.attributed_busy_ns + attribution.unattributed_busy_ns;
  if (total > 0 && attribution.unattributed_busy_ns * 100 > total) {
    warnings.push_back(fmt::format("{:.1f}% of GPU time is not attributed to any phase",
                                   100.0 * static_cast<double>(attribution.unattributed_busy_ns) /
                                       static_cast<double>(total)));
  }
  for (const CostRow &row : rows) {
    const double forward = to_double(row.fwd_ms);
    const double recompute = to_double(row.recompute_ms);
    // A row without R (the injection library's, when a script marks no R range) is not off.
    if (forward > 0 && recompute > 0 && std::abs(recompute - forward) > 0.15 * forward) {
      warnings.push_back(fmt::format("layer {}: recompute_ms {} is more than 15% off fwd_ms {}",
                                     row.layer_id, format_rational(row.recompute_ms),
                                     format_rational(row.fwd_ms)));
    }
  }
  return warnings;
}

void apply_phase_bytes(CostFile &file, const std::map<PhaseId, std::int64_t> &measured, Pass pass,
                       int warmup, ByteColumn column, std::string_view evidence) {
  std::map<std::uint16_t, std::vector<std::int64_t>> samples_of;
  for (const auto &[phase, bytes] : measured)
    if (phase.pass == pass && phase.repetition >= warmup)
      samples_of[phase.layer].push_back(bytes);
  if (samples_of.empty())
    return;
  for (const CostRow &row : file.rows) {
    if (!samples_of.count(static_cast<std::uint16_t>(row.layer_id))) {
      file.metadata.warnings.push_back(
          fmt::format("layer {} has no {} in its {}: {} left absent", row.layer_id, evidence,
                      pass == Pass::forward ? "forward" : "backward", column.name));
      return;
    }
  }
  for (CostRow &row : file.rows) {
    std::vector<std::int64_t> &samples =
        samples_of.find(static_cast<std::uint16_t>(row.layer_id))->second;
    const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
    std::nth_element(samples.begin(), middle, samples.end());
    row.*column.field = static_cast<double>(std::max<std::int64_t>(0, *middle));
  }
  file.only_columns.emplace_back(column.name);
}

void apply_forward_kept_bytes(CostFile &file, const std::map<PhaseId, std::int64_t> &forward_kept,
                              int warmup, std::string_view evidence) {
  apply_phase_bytes(file, forward_kept, Pass::forward, warmup,
                    {&CostRow::activation_bytes_full, "activation_bytes_full"}, evidence);
}

CostFile injection_cost_file(const Attribution &attribution, const DecodedActivity &counters,
                             int warmup) {
  CostFile file = injected_cost_file(summarize_passes(attribution.phases, warmup), "cupti");
  file.metadata.timer = "cupti";
  file.metadata.device = "injected";
  file.metadata.dropped_records = static_cast<std::int64_t>(counters.dropped_records);
  file.metadata.unattributed_kernel_ms =
      static_cast<double>(attribution.unattributed_busy_ns) / 1e6;
  for (std::string &warning : measurement_warnings(counters, attribution, file.rows))
    file.metadata.warnings.push_back(std::move(warning));
  // A forward whose tensors come from a cache shows no allocation: only forwards that allocated
  // are evidence, and a layer needs one in every kept repetition.
  std::map<PhaseId, std::int64_t> forward_kept;
  std::map<std::uint16_t, std::pair<int, int>> forwards; // layer -> (kept forwards, that allocated)
  for (const PhaseMetrics &phase : attribution.phases) {
    if (phase.phase.pass != Pass::forward || phase.phase.repetition < warmup)
      continue;
    auto &[all, allocating] = forwards[phase.phase.layer];
    ++all;
    if (phase.allocations == 0)
      continue;
    ++allocating;
    forward_kept[phase.phase] = phase.allocated_bytes;
  }
  for (const auto &[layer, counts] : forwards) {
    if (counts.second > 0 && counts.second < counts.first) {
      file.metadata.warnings.push_back(
          fmt::format("layer {}: {} of {} forwards allocated (a caching allocator?): "
                      "activation_bytes_full left absent",
                      layer, counts.second, counts.first));
      return file;
    }
  }
  apply_forward_kept_bytes(file, forward_kept, warmup, "CUPTI allocation records");
  return file;
}

} // namespace ppsim::profiler
