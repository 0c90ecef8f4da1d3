// Recomputation-aware partitioning DP (spec remat.md 8).
#include "remat/partition.h"

#include "sim/io/decimal.h"

#include "sim/error.h"

#include <algorithm>
#include <fmt/format.h>

namespace ppsim {
namespace {

double milliseconds(Rational value) {
  return static_cast<double>(value.numerator) / static_cast<double>(value.denominator);
}

} // namespace

std::optional<Partition> partition_layers(int layers, int stages, const StageTimeFn &stage_time) {
  if (stages < 1 || layers < stages) {
    throw Error(fmt::format("cannot split {} layers into {} stages", layers, stages));
  }
  constexpr double kNone = std::numeric_limits<double>::infinity();
  // best[k][l]: the least bottleneck of the first l layers in k stages; take[k][l]: layers of
  // stage k - 1 in that split.
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(layers + 1, kNone));
  std::vector<std::vector<int>> take(stages + 1, std::vector<int>(layers + 1, 0));
  best[0][0] = 0;
  for (int k = 1; k <= stages; ++k) {
    // Every stage needs one layer, so stage k - 1 ends between layer k and L - (p - k).
    for (int l = k; l <= layers - (stages - k); ++l) {
      for (int n = 1; n <= l - (k - 1); ++n) {
        if (best[k - 1][l - n] == kNone) continue;
        const std::optional<double> time = stage_time(k - 1, l - n, n);
        if (!time) continue;
        const double bottleneck = std::max(best[k - 1][l - n], *time);
        if (bottleneck < best[k][l]) {
          best[k][l] = bottleneck;
          take[k][l] = n;
        }
      }
    }
  }
  if (best[stages][layers] == kNone) return std::nullopt;
  Partition partition;
  partition.bottleneck_ms = best[stages][layers];
  partition.layers_per_stage.resize(stages);
  for (int k = stages, l = layers; k > 0; l -= take[k][l], --k) {
    partition.layers_per_stage[k - 1] = take[k][l];
  }
  for (int k = 0, first = 0; k < stages; first += partition.layers_per_stage[k], ++k) {
    partition.stage_ms.push_back(*stage_time(k, first, partition.layers_per_stage[k]));
  }
  return partition;
}

int in_flight_count(const std::string &schedule, int stages, int stage) {
  if (schedule == "1f1b" || schedule == "1f1b-split") return stages - stage;
  if (schedule == "zb-h1") return stages;
  if (schedule == "zb-h2") return 2 * stages - 1;
  if (schedule == "v-half") return (stages + 2) / 2;
  const std::vector<std::string> known{"1f1b", "1f1b-split", "zb-h1", "zb-h2", "v-half"};
  const std::string suggestion = closest_name(schedule, known);
  throw Error(fmt::format("no in-flight count for schedule '{}'{}", schedule,
                          suggestion.empty() ? "" : fmt::format(", did you mean '{}'?", suggestion)));
}

int stage_in_flight(const PartitionOptions &options, int stage) {
  if (options.in_flight.empty())
    return in_flight_count(options.schedule, options.stages, stage);
  return options.in_flight.at(static_cast<std::size_t>(stage));
}

StageModel stage_model(const CostFile &costs, const PartitionOptions &options, int stage, int first,
                       int count) {
  StageModel model;
  double static_bytes = 0;
  std::vector<LayerProfile> layers;
  for (int l = first; l < first + count; ++l) {
    const CostRow &row = costs.rows[l];
    model.compute_ms +=
        milliseconds(row.fwd_ms) + milliseconds(row.bwd_input_ms) + milliseconds(row.bwd_weight_ms);
    static_bytes += resident_state_bytes(row.param_bytes, row.grad_bytes, row.optimizer_state_bytes,
                                         options.optimizer_shards);
    layers.push_back(layer_profile(row, options.windows));
  }
  const double pipeline_ms =
      costs.rows[first + count - 1].output_bytes / (options.windows.p2p_bandwidth_gb_per_s * 1e6) +
      options.windows.bubble_ms;
  model.problem = build_stage_problem(layers, pipeline_ms,
                                      stage_in_flight(options, stage),
                                      static_bytes, options.memory_limit_bytes);
  return model;
}

StageTimeFn stage_time_from_costs(const CostFile &costs, const PartitionOptions &options) {
  return [&costs, options](int stage, int first, int count) -> std::optional<double> {
    const StageModel model = stage_model(costs, options, stage, first, count);
    if (options.mode == PartitionMode::balanced) {
      if (!evaluate(model.problem, keep_all(model.problem)).feasible) return std::nullopt;
      return model.compute_ms;
    }
    const std::optional<OverlapPlan> plan = lynx_heuristic(model.problem);
    if (!plan) return std::nullopt;
    return model.compute_ms + evaluate(model.problem, *plan).exposed_ms;
  };
}

Partition partition_costs(const CostFile &costs, const PartitionOptions &options) {
  const std::optional<Partition> partition =
      partition_layers(static_cast<int>(costs.rows.size()), options.stages,
                       stage_time_from_costs(costs, options));
  if (!partition) {
    throw Error(fmt::format("no split of {} layers into {} stages fits {} per device",
                            costs.rows.size(), options.stages, format_bytes(options.memory_limit_bytes)));
  }
  return *partition;
}

} // namespace ppsim
