#include "profiler/run_plan.h"

#include "base/error.h"

#include <cmath>
#include <fmt/format.h>

namespace ppsim::profiler {

RunMode parse_run_mode(const std::string &text) {
  if (text == "isolated")
    return RunMode::isolated;
  if (text == "sequence")
    return RunMode::sequence;
  throw Error("", 0, "mode", fmt::format("expected isolated or sequence, got \"{}\"",
                                         cut_for_message(text)));
}

std::string run_mode_name(RunMode mode) {
  return mode == RunMode::isolated ? "isolated" : "sequence";
}

PhaseTimer parse_phase_timer(const std::string &text) {
  if (text == "cupti")
    return PhaseTimer::cupti;
  if (text == "cuda-events")
    return PhaseTimer::cuda_events;
  throw Error("", 0, "timer", fmt::format("expected cupti or cuda-events, got \"{}\"",
                                          cut_for_message(text)));
}

std::string phase_timer_name(PhaseTimer timer) {
  return timer == PhaseTimer::cupti ? "cupti" : "cuda-events";
}

std::vector<PhaseStep> phase_order(RunMode mode, int layers) {
  std::vector<PhaseStep> steps;
  const auto layer_id = [](int layer) { return static_cast<std::uint16_t>(layer); };
  if (mode == RunMode::isolated) {
    for (int layer = 0; layer < layers; ++layer) {
      for (const Pass pass :
           {Pass::forward, Pass::backward_input, Pass::backward_weight, Pass::recompute_full,
            Pass::recompute_selective, Pass::backward_total}) {
        steps.push_back({pass, layer_id(layer)});
      }
    }
    return steps;
  }
  for (int layer = 0; layer < layers; ++layer)
    steps.push_back({Pass::forward, layer_id(layer)});
  for (int layer = layers - 1; layer >= 0; --layer) {
    for (const Pass pass : {Pass::backward_input, Pass::backward_weight, Pass::recompute_full,
                            Pass::recompute_selective, Pass::backward_total}) {
      steps.push_back({pass, layer_id(layer)});
    }
  }
  return steps;
}

bool synchronizes_each_phase(RunMode mode) { return mode == RunMode::isolated; }

int blocks_needed(RunMode mode, int layers) { return mode == RunMode::sequence ? layers : 1; }

int block_index(RunMode mode, const PhaseStep &step) {
  return mode == RunMode::sequence ? step.layer : 0;
}

std::vector<PhaseMetrics> phase_metrics_from_events(const std::vector<EventTiming> &timings) {
  std::vector<PhaseMetrics> phases;
  phases.reserve(timings.size());
  for (const EventTiming &timing : timings) {
    PhaseMetrics metrics;
    metrics.phase = timing.phase;
    // cudaEventElapsedTime resolves about 0.5 us; a negative value would be a driver bug.
    const double ns = std::max(0.0, static_cast<double>(timing.elapsed_ms) * 1e6);
    metrics.busy_union_ns = static_cast<std::uint64_t>(std::llround(ns));
    metrics.span_ns = metrics.busy_union_ns;
    phases.push_back(metrics);
  }
  return phases;
}

void apply_arena_peaks(std::vector<CostRow> &rows, const std::map<Pass, PhaseBytes> &measured) {
  const std::pair<Pass, double CostRow::*> fields[] = {
      {Pass::forward, &CostRow::fwd_peak_temp_bytes},
      {Pass::backward_input, &CostRow::bwd_input_peak_temp_bytes},
      {Pass::backward_weight, &CostRow::bwd_weight_peak_temp_bytes},
      {Pass::recompute_full, &CostRow::recompute_peak_temp_bytes}};
  for (const auto &[pass, field] : fields) {
    const auto found = measured.find(pass);
    if (found == measured.end())
      continue;
    for (CostRow &row : rows)
      row.*field = static_cast<double>(found->second.peak_temp_bytes);
  }
}

} // namespace ppsim::profiler
