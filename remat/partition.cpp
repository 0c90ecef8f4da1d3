// Recomputation-aware partitioning DP (docs/partition.md).
#include "remat/partition.h"
#include "base/index.h"
#include "costs/stage_sums.h"
#include "sim/schedules/registry.h"

#include "base/decimal.h"

#include "base/error.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>

namespace ppsim {

namespace {

constexpr double kNone = std::numeric_limits<double>::infinity();

// The table of the DP of docs/partition.md: best[k][l], the least bottleneck of the first l
// layers in k stages; take[k][l], the layers of stage k - 1 in that split.
struct SplitTable {
  std::vector<std::vector<double>> best;
  std::vector<std::vector<int>> take;
  SplitTable(int layers, int stages)
      : best(at(stages + 1), std::vector<double>(at(layers + 1), kNone)),
        take(at(stages + 1), std::vector<int>(at(layers + 1), 0)) {
    best[0][0] = 0;
  }
};

void require_splittable(int layers, int stages) {
  if (stages < 1 || layers < stages)
    throw Error(fmt::format("cannot split {} layers into {} stages", layers, stages));
}

// The split that ends at best[stages][layers], with each stage's time; nullopt when none fits.
std::optional<Partition> split_of(const SplitTable &table, int layers, int stages,
                                  const StageTimeFn &stage_time) {
  if (table.best[at(stages)][at(layers)] == kNone)
    return std::nullopt;
  Partition partition;
  partition.bottleneck_ms = table.best[at(stages)][at(layers)];
  partition.layers_per_stage.resize(at(stages));
  for (int k = stages, l = layers; k > 0; l -= table.take[at(k)][at(l)], --k)
    partition.layers_per_stage[at(k - 1)] = table.take[at(k)][at(l)];
  for (int k = 0, first = 0; k < stages; first += partition.layers_per_stage[at(k)], ++k)
    partition.stage_ms.push_back(*stage_time(k, first, partition.layers_per_stage[at(k)]));
  return partition;
}

} // namespace

std::optional<Partition> partition_layers(int layers, int stages, const StageTimeFn &stage_time,
                                          const StageBoundFn &lower_bound,
                                          const ProgressFn &progress) {
  require_splittable(layers, stages);
  SplitTable table(layers, stages);
  ProgressCounter counter(progress, static_cast<std::size_t>(stages));
  for (int k = 1; k <= stages; ++k) {
    // Every stage needs one layer, so stage k - 1 ends between layer k and L - (p - k).
    for (int l = k; l <= layers - (stages - k); ++l) {
      double &least = table.best[at(k)][at(l)];
      int &least_take = table.take[at(k)][at(l)];
      const int longest = l - (k - 1);
      // Whether n layers in the last stage, at `value` or more, could still win (ties: fewer).
      const auto may_improve = [&](double value, int n) {
        return value < least || (value == least && n < least_take);
      };
      const auto consider = [&](int n, double bound) {
        const double before = table.best[at(k - 1)][at(l - n)];
        if (before == kNone || !may_improve(std::max(before, bound), n))
          return;
        const std::optional<double> time = stage_time(k - 1, l - n, n);
        if (time && may_improve(std::max(before, *time), n)) {
          least = std::max(before, *time);
          least_take = n;
        }
      };
      // The split of l - 1 layers with its last stage one layer longer is usually close to the
      // optimum; asked first, it lets the bound cut the search short.
      const int seed = l > k ? table.take[at(k)][at(l - 1)] + 1 : 0;
      if (lower_bound && seed >= 1 && seed <= longest) {
        if (const std::optional<double> bound = lower_bound(k - 1, l - seed, seed))
          consider(seed, *bound);
      }
      for (int n = 1; n <= longest; ++n) {
        double bound = 0;
        if (lower_bound) {
          if (n == seed)
            continue;
          const std::optional<double> value = lower_bound(k - 1, l - n, n);
          if (!value || !may_improve(*value, n))
            break; // so is every longer last stage
          bound = *value;
        }
        consider(n, bound);
      }
    }
    counter.step_done();
  }
  return split_of(table, layers, stages, stage_time);
}

// With a last stage's time non-decreasing in its length and the best split of the layers before
// it non-increasing (fewer layers), max(before(n), time(n)) falls and then rises in n: the
// crossing, found by binary search, and the shortest stage as good as the one just before it are
// the only candidates. Ties go to fewer layers, as in partition_layers.
std::optional<Partition> partition_layers_monotone(int layers, int stages,
                                                   const StageTimeFn &stage_time,
                                                   const ProgressFn &progress) {
  require_splittable(layers, stages);
  SplitTable table(layers, stages);
  ProgressCounter counter(progress, static_cast<std::size_t>(stages));
  for (int k = 1; k <= stages; ++k) {
    const std::vector<double> &previous = table.best[at(k - 1)];
    for (int l = k; l <= layers - (stages - k); ++l) {
      const int longest = l - (k - 1);
      const auto before = [&](int n) { return previous[at(l - n)]; };
      const auto time = [&](int n) { return stage_time(k - 1, l - n, n).value_or(kNone); };
      // The shortest last stage at least as slow as the split before it (longest + 1: none).
      int low = 1, high = longest + 1;
      while (low < high) {
        const int n = low + (high - low) / 2;
        if (time(n) >= before(n))
          high = n;
        else
          low = n + 1;
      }
      const int crossing = low;
      double least = crossing <= longest ? time(crossing) : kNone;
      int least_take = crossing <= longest ? crossing : 0;
      if (crossing > 1) {
        // Below the crossing the split before dominates; the shortest stage reaching its least.
        const double value = before(crossing - 1);
        int first = 1, last = crossing - 1;
        while (first < last) {
          const int n = first + (last - first) / 2;
          if (before(n) <= value)
            last = n;
          else
            first = n + 1;
        }
        if (value <= least) {
          least = value;
          least_take = first;
        }
      }
      if (least != kNone) {
        table.best[at(k)][at(l)] = least;
        table.take[at(k)][at(l)] = least_take;
      }
    }
    counter.step_done();
  }
  return split_of(table, layers, stages, stage_time);
}

namespace {

// A cost file's per-layer F + B + W (exact: equal groups weigh the same) and resident state
// (parameters, gradients, optimizer states), as prefix sums.
struct LayerSums {
  std::vector<Rational> time{Rational{0, 1}};
  std::vector<double> state{0};

  explicit LayerSums(const CostFile &costs) {
    for (const CostRow &row : costs.rows) {
      time.push_back(time.back() + row.fwd_ms + row.bwd_input_ms + row.bwd_weight_ms);
      state.push_back(state.back() + row.param_bytes + row.grad_bytes + row.optimizer_state_bytes);
    }
  }
  [[nodiscard]] Rational time_of(int first, int count) const {
    return time[at(first + count)] + Rational{-1, 1} * time[at(first)];
  }
  [[nodiscard]] double state_of(int first, int count) const {
    return state[at(first + count)] - state[at(first)];
  }
};

// How good a split is when devices hold several stages: the device times from the slowest down
// (compared in that order, so a split that unloads the second slowest device is better too), then
// the largest device state.
struct DeviceScore {
  std::vector<Rational> times;
  double largest_state = 0;

  friend bool operator<(const DeviceScore &a, const DeviceScore &b) {
    if (a.times != b.times)
      return std::lexicographical_compare(a.times.begin(), a.times.end(), b.times.begin(),
                                          b.times.end());
    return a.largest_state < b.largest_state;
  }
};

DeviceScore device_score(const LayerSums &sums, const std::vector<int> &counts,
                         const std::vector<int> &stage_device, int devices) {
  std::vector<Rational> times(at(devices), Rational{0, 1});
  std::vector<double> states(at(devices), 0);
  std::vector<int> first_layer{0};
  for (int count : counts)
    first_layer.push_back(first_layer.back() + count);
  for (std::size_t global = 0; global < stage_device.size(); ++global) {
    const std::size_t stage = global % counts.size();
    const std::size_t device = at(stage_device[global]);
    times[device] = times[device] + sums.time_of(first_layer[stage], counts[stage]);
    states[device] += sums.state_of(first_layer[stage], counts[stage]);
  }
  std::sort(times.begin(), times.end(), [](Rational a, Rational b) { return b < a; });
  return {times, *std::max_element(states.begin(), states.end())};
}

// Moves one layer at a time from a stage to another (the stages between shift by a layer) while
// that improves the device score: a local optimum of the device-aware split.
std::vector<int> improve_for_devices(const LayerSums &sums, std::vector<int> counts,
                                     const std::vector<int> &stage_device, int devices) {
  DeviceScore current = device_score(sums, counts, stage_device, devices);
  for (bool improved = true; improved;) {
    improved = false;
    std::vector<int> best_counts;
    for (std::size_t from = 0; from < counts.size(); ++from) {
      if (counts[from] < 2)
        continue;
      for (std::size_t to = 0; to < counts.size(); ++to) {
        if (to == from)
          continue;
        std::vector<int> moved = counts;
        --moved[from];
        ++moved[to];
        DeviceScore score = device_score(sums, moved, stage_device, devices);
        if (score < current) {
          current = std::move(score);
          best_counts = std::move(moved);
        }
      }
    }
    if (!best_counts.empty()) {
      counts = std::move(best_counts);
      improved = true;
    }
  }
  return counts;
}

// The split with the least slowest-device time, by depth-first search over the stages' sizes from
// `incumbent`: a branch stops once a device it loads reaches the best time found. Exact when the
// search ends within `node_limit` stages tried; past it, the best split found so far.
std::vector<int> least_slowest_device(const LayerSums &sums, std::vector<int> incumbent,
                                      const std::vector<int> &stage_device, int devices,
                                      long node_limit) {
  const int stages = static_cast<int>(incumbent.size());
  const int layers = static_cast<int>(sums.time.size()) - 1;
  double best = to_double(device_score(sums, incumbent, stage_device, devices).times.front());
  std::vector<std::vector<int>> devices_of(at(stages)); // the devices running each stage
  for (std::size_t global = 0; global < stage_device.size(); ++global)
    devices_of[global % at(stages)].push_back(stage_device[global]);
  std::vector<double> load(at(devices), 0);
  std::vector<int> counts;
  long nodes = 0;
  const std::function<void(int)> search = [&](int first) {
    const int stage = static_cast<int>(counts.size());
    if (stage == stages) {
      const double slowest = *std::max_element(load.begin(), load.end());
      if (first == layers && slowest < best * (1 - 1e-12)) {
        best = slowest;
        incumbent = counts;
      }
      return;
    }
    for (int n = 1; first + n + (stages - stage - 1) <= layers && nodes < node_limit; ++n) {
      ++nodes;
      const double time = to_double(sums.time_of(first, n));
      bool below = true;
      for (int device : devices_of[at(stage)])
        below = below && load[at(device)] + time < best * (1 - 1e-12);
      if (!below)
        break; // a longer stage only loads its devices more
      for (int device : devices_of[at(stage)])
        load[at(device)] += time;
      counts.push_back(n);
      search(first + n);
      counts.pop_back();
      for (int device : devices_of[at(stage)])
        load[at(device)] -= time;
    }
  };
  search(0);
  return incumbent;
}

} // namespace

Partition cost_balanced_split(const CostFile &costs, int stages,
                              const std::vector<int> &stage_device) {
  require_layer_per_stage(costs.rows.size(), stages);
  const int layers = static_cast<int>(costs.rows.size());
  const LayerSums sums(costs);
  const auto time_of = [&](int /*stage*/, int first, int count) -> std::optional<double> {
    return to_double(sums.time_of(first, count));
  };
  const double slowest = partition_layers_monotone(layers, stages, time_of)->bottleneck_ms;
  std::vector<int> counts =
      partition_layers_monotone(layers, stages,
                       [&](int stage, int first, int count) -> std::optional<double> {
                         if (*time_of(stage, first, count) > slowest)
                           return std::nullopt;
                         return sums.state_of(first, count);
                       })
          ->layers_per_stage;
  std::vector<int> sorted_devices(stage_device.begin(), stage_device.end());
  std::sort(sorted_devices.begin(), sorted_devices.end());
  const bool shared_devices =
      std::adjacent_find(sorted_devices.begin(), sorted_devices.end()) != sorted_devices.end();
  const int devices = sorted_devices.empty() ? stages : sorted_devices.back() + 1;
  if (shared_devices) {
    std::vector<int> even = even_layer_counts(costs.rows.size(), stages);
    if (device_score(sums, even, stage_device, devices) <
        device_score(sums, counts, stage_device, devices))
      counts = std::move(even);
    counts = improve_for_devices(sums, std::move(counts), stage_device, devices);
    constexpr long kNodeLimit = 20000; // a few ms; exact on small splits
    counts = improve_for_devices(
        sums, least_slowest_device(sums, std::move(counts), stage_device, devices, kNodeLimit),
        stage_device, devices);
  }
  Partition split;
  split.layers_per_stage = counts;
  for (int k = 0, first = 0; k < stages; first += counts[at(k)], ++k)
    split.stage_ms.push_back(*time_of(k, first, counts[at(k)]));
  split.bottleneck_ms =
      shared_devices ? to_double(device_score(sums, counts, stage_device, devices).times.front())
                     : *std::max_element(split.stage_ms.begin(), split.stage_ms.end());
  return split;
}

int in_flight_count(const std::string &schedule, int stages, int stage) {
  const ScheduleInfo &info = find_schedule(schedule);
  if (!info.in_flight) {
    std::vector<std::string> with_count;
    for (const ScheduleInfo &entry : schedule_registry()) {
      if (entry.in_flight)
        with_count.push_back(entry.name);
    }
    throw Error(fmt::format("schedule '{}' has no in-flight count formula (those with one: {})",
                            schedule, fmt::join(with_count, ", ")));
  }
  return info.in_flight(stages, stage);
}

int stage_in_flight(const PartitionOptions &options, int stage) {
  if (options.in_flight.empty())
    return in_flight_count(options.schedule, options.stages, stage);
  return options.in_flight.at(at(stage));
}

namespace {

/// What the stage models read of each layer, computed once for a whole cost file.
struct LayerTable {
  std::vector<LayerProfile> profiles;
  std::vector<double> compute_ms;   ///< F + B + W
  std::vector<double> static_bytes; ///< parameters, gradients and optimizer states
};

LayerTable layer_table(const CostFile &costs, const PartitionOptions &options, int first,
                       int count) {
  LayerTable table;
  for (int l = first; l < first + count; ++l) {
    const CostRow &row = costs.rows[at(l)];
    table.profiles.push_back(layer_profile(row, options.windows));
    table.compute_ms.push_back(to_double(row.fwd_ms) + to_double(row.bwd_input_ms) +
                               to_double(row.bwd_weight_ms));
    table.static_bytes.push_back(resident_state_bytes(
        row.param_bytes, row.grad_bytes, row.optimizer_state_bytes, options.optimizer_shards));
  }
  return table;
}

/// The model of layers [first, first + count) of `costs`, whose rows from `offset` on `table`
/// holds.
StageModel stage_model_from(const CostFile &costs, const LayerTable &table, int offset,
                            const PartitionOptions &options, int stage, int first, int count) {
  StageModel model;
  double static_bytes = 0;
  const auto begin = at(first - offset);
  const auto end = begin + at(count);
  for (std::size_t i = begin; i < end; ++i) {
    model.compute_ms += table.compute_ms[i];
    static_bytes += table.static_bytes[i];
  }
  const std::vector<LayerProfile> layers(table.profiles.begin() +
                                             static_cast<std::ptrdiff_t>(begin),
                                         table.profiles.begin() + static_cast<std::ptrdiff_t>(end));
  const double pipeline_ms = costs.rows[at(first + count - 1)].output_bytes /
                                 (options.windows.p2p_bandwidth_gb_per_s * 1e6) +
                             options.windows.bubble_ms;
  model.problem = build_stage_problem(layers, pipeline_ms, stage_in_flight(options, stage),
                                      static_bytes, options.budget_bytes);
  return model;
}

} // namespace

StageModel stage_model(const CostFile &costs, const PartitionOptions &options, int stage, int first,
                       int count) {
  return stage_model_from(costs, layer_table(costs, options, first, count), first, options, stage,
                          first, count);
}

namespace {

/// Prefix sums over a cost file's layers: F + B + W, static bytes, and the bytes per in-flight
/// microbatch that every plan of the mode holds (everything when balanced, the layer inputs when
/// remat-aware). A balanced stage is exactly these sums; they bound a remat-aware one.
class StageSums {
public:
  StageSums(const CostFile &costs, const PartitionOptions &options) : options_(options) {
    const LayerTable table = layer_table(costs, options, 0, static_cast<int>(costs.rows.size()));
    for (std::size_t l = 0; l < table.profiles.size(); ++l) {
      const LayerProfile &layer = table.profiles[l];
      double held = layer.kept_bytes;
      if (options.mode == PartitionMode::balanced) {
        for (const OverlapTensor &tensor : layer.tensors)
          held += tensor.bytes;
      }
      compute_ms_.push_back(compute_ms_.back() + table.compute_ms[l]);
      static_bytes_.push_back(static_bytes_.back() + table.static_bytes[l]);
      held_bytes_.push_back(held_bytes_.back() + held);
    }
  }

  /// F + B + W of the stage, or nullopt when the bytes it holds exceed the budget; `shave`
  /// lowers both sums by that relative amount.
  std::optional<double> time(int stage, int first, int count, double shave = 0) const {
    const auto sum = [&](const std::vector<double> &values) {
      const double total = values[at(first + count)] - values[at(first)];
      return std::max(0.0, total * (1 - shave));
    };
    const double bytes = sum(static_bytes_) + stage_in_flight(options_, stage) * sum(held_bytes_);
    if (bytes > options_.budget_bytes)
      return std::nullopt;
    return sum(compute_ms_);
  }

private:
  PartitionOptions options_;
  std::vector<double> compute_ms_{0}, static_bytes_{0}, held_bytes_{0};
};

} // namespace

StageTimeFn stage_time_from_costs(const CostFile &costs, const PartitionOptions &options) {
  if (options.mode == PartitionMode::balanced) {
    const auto sums = std::make_shared<const StageSums>(costs, options);
    return [sums](int stage, int first, int count) { return sums->time(stage, first, count); };
  }
  const auto table = std::make_shared<const LayerTable>(
      layer_table(costs, options, 0, static_cast<int>(costs.rows.size())));
  return [&costs, options, table](int stage, int first, int count) -> std::optional<double> {
    const StageModel model = stage_model_from(costs, *table, 0, options, stage, first, count);
    const std::optional<OverlapPlan> plan = lynx_heuristic(model.problem);
    if (!plan)
      return std::nullopt;
    return model.compute_ms + evaluate(model.problem, *plan).exposed_ms;
  };
}

StageBoundFn stage_bound_from_costs(const CostFile &costs, const PartitionOptions &options) {
  // Differences of prefix sums round differently from the stage model's own sums; shaving a
  // relative 1e-9 keeps the bound below them.
  const auto sums = std::make_shared<const StageSums>(costs, options);
  return [sums](int stage, int first, int count) { return sums->time(stage, first, count, 1e-9); };
}

Partition partition_costs(const CostFile &costs, const PartitionOptions &options) {
  const int layers = static_cast<int>(costs.rows.size());
  // A balanced stage's time and memory are prefix sums: both grow with the stage, and the same
  // layers fit a later stage where it holds no more microbatches in flight.
  bool in_flight_non_increasing = true;
  for (int stage = 1; stage < options.stages; ++stage)
    if (stage_in_flight(options, stage) > stage_in_flight(options, stage - 1))
      in_flight_non_increasing = false;
  const std::optional<Partition> partition =
      options.mode == PartitionMode::balanced && in_flight_non_increasing
          ? partition_layers_monotone(layers, options.stages,
                                      stage_time_from_costs(costs, options), options.progress)
          : partition_layers(layers, options.stages, stage_time_from_costs(costs, options),
                             stage_bound_from_costs(costs, options), options.progress);
  if (!partition) {
    throw Error(fmt::format("no split of {} layers into {} stages fits {} per device",
                            costs.rows.size(), options.stages, format_bytes(options.budget_bytes)));
  }
  return *partition;
}

} // namespace ppsim
