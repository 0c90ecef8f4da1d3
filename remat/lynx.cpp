// Reconstructed Lynx overlap model, heuristic and MILP (docs/lynx.md, "The model").
#include "remat/lynx.h"
#include "base/index.h"

#include "base/error.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <numeric>

namespace ppsim {
namespace {

bool dropped(Placement placement) { return placement != Placement::keep; }

/// The segment from which tensor `index` is available (-1 = all along, the layer input).
int available_from(const OverlapProblem &problem, const OverlapPlan &plan, int index) {
  if (index < 0 || plan.placement[index] == Placement::keep)
    return -1;
  if (plan.placement[index] == Placement::on_demand)
    return problem.tensors[index].demand_segment;
  return problem.windows[plan.window[index]].position;
}

/// Bytes of the tensors `plan` keeps, per in-flight microbatch.
double kept_bytes(const OverlapProblem &problem, const OverlapPlan &plan) {
  double kept = 0;
  for (std::size_t o = 0; o < problem.tensors.size(); ++o) {
    if (!dropped(plan.placement[o]))
      kept += problem.tensors[o].bytes;
  }
  return kept;
}

/// Adds `bytes` to the segments where recomputed tensor `index` is resident: from where it is
/// rebuilt (`start`) to its consumer.
void add_live_range(const OverlapProblem &problem, int index, int start, double bytes,
                    std::vector<double> &live) {
  for (int t = std::max(start, 0);
       t <= problem.tensors[index].consumer_segment && t < problem.segments; ++t) {
    live[t] += bytes;
  }
}

/// Resident bytes of the recomputed tensors at each segment.
std::vector<double> live_bytes(const OverlapProblem &problem, const OverlapPlan &plan) {
  std::vector<double> live(at(std::max(problem.segments, 1)), 0.0);
  for (std::size_t o = 0; o < problem.tensors.size(); ++o) {
    if (!dropped(plan.placement[o]))
      continue;
    const int index = static_cast<int>(o);
    add_live_range(problem, index, available_from(problem, plan, index), problem.tensors[o].bytes,
                   live);
  }
  return live;
}

/// Peak resident bytes over the segments (docs/lynx.md: kept tensors of every in-flight
/// microbatch, plus recomputed tensors from their placement point to their consumer).
double peak_bytes(const OverlapProblem &problem, const OverlapPlan &plan) {
  const std::vector<double> live = live_bytes(problem, plan);
  return problem.static_bytes + problem.in_flight * kept_bytes(problem, plan) +
         *std::max_element(live.begin(), live.end());
}

bool fits(const OverlapProblem &problem, const OverlapPlan &plan) {
  return peak_bytes(problem, plan) <= problem.budget_bytes;
}

std::vector<double> window_loads(const OverlapProblem &problem, const OverlapPlan &plan) {
  std::vector<double> load(problem.windows.size(), 0.0);
  for (std::size_t o = 0; o < problem.tensors.size(); ++o) {
    if (plan.placement[o] == Placement::window)
      load[plan.window[o]] += problem.tensors[o].recompute_ms;
  }
  return load;
}

double overflow(double load, double length) { return std::max(0.0, load - length); }

/// Tensor indices of each layer in their order (identical layers list them alike).
std::vector<std::vector<int>> tensors_by_layer(const OverlapProblem &problem) {
  std::vector<std::vector<int>> layers;
  for (std::size_t o = 0; o < problem.tensors.size(); ++o) {
    const int layer = problem.tensors[o].layer;
    if (layer < 0)
      throw Error(fmt::format("tensor '{}': negative layer", problem.tensors[o].name));
    if (static_cast<int>(layers.size()) <= layer)
      layers.resize(layer + 1);
    layers[layer].push_back(static_cast<int>(o));
  }
  return layers;
}

} // namespace

OverlapPlan keep_all(const OverlapProblem &problem) {
  return {std::vector<Placement>(problem.tensors.size(), Placement::keep),
          std::vector<int>(problem.tensors.size(), -1)};
}

OverlapCost evaluate(const OverlapProblem &problem, const OverlapPlan &plan) {
  OverlapCost cost;
  cost.feasible = true;
  for (std::size_t o = 0; o < problem.tensors.size(); ++o) {
    const OverlapTensor &tensor = problem.tensors[o];
    if (!dropped(plan.placement[o]))
      continue;
    cost.recompute_ms += tensor.recompute_ms;
    if (plan.placement[o] == Placement::on_demand)
      cost.exposed_ms += tensor.recompute_ms;
    const int start = available_from(problem, plan, static_cast<int>(o));
    if (start > tensor.consumer_segment || available_from(problem, plan, tensor.producer) > start) {
      cost.feasible = false;
    }
  }
  const std::vector<double> load = window_loads(problem, plan);
  for (std::size_t w = 0; w < load.size(); ++w) {
    cost.exposed_ms += overflow(load[w], problem.windows[w].length_ms);
  }
  cost.peak_bytes = peak_bytes(problem, plan);
  cost.feasible = cost.feasible && cost.peak_bytes <= problem.budget_bytes;
  return cost;
}

OverlapPlan on_demand(const OverlapPlan &plan) {
  OverlapPlan result = plan;
  for (std::size_t o = 0; o < result.placement.size(); ++o) {
    if (dropped(result.placement[o]))
      result.placement[o] = Placement::on_demand;
    result.window[o] = -1;
  }
  return result;
}

std::optional<OverlapPlan> lynx_heuristic(const OverlapProblem &problem) {
  // (2)-(3): rank the representative layer's tensors by bytes saved per millisecond and drop the
  // same local ranks in every layer, the fewest that fit on demand.
  const std::vector<std::vector<int>> layers = tensors_by_layer(problem);
  const std::vector<int> &representative = layers.empty() ? std::vector<int>{} : layers.front();
  std::vector<int> rank(representative.size());
  std::iota(rank.begin(), rank.end(), 0);
  const auto density = [&](int local) {
    const OverlapTensor &tensor = problem.tensors[representative[local]];
    return tensor.recompute_ms > 0 ? tensor.bytes / tensor.recompute_ms
                                   : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(rank.begin(), rank.end(), [&](int a, int b) { return density(a) > density(b); });
  OverlapPlan plan = keep_all(problem);
  for (std::size_t k = 0; !fits(problem, plan); ++k) {
    if (k == rank.size())
      return std::nullopt;
    for (const std::vector<int> &layer : layers) {
      if (rank[k] < static_cast<int>(layer.size()))
        plan.placement[layer[rank[k]]] = Placement::on_demand;
    }
  }
  const OverlapPlan baseline = plan;

  // Latest window allowed for each tensor: before its consumer and before the latest window of
  // any dropped tensor recomputed from it, so that one can always share the producer's window.
  const int count = static_cast<int>(problem.tensors.size());
  std::vector<int> latest(count);
  for (int o = 0; o < count; ++o)
    latest[o] = problem.tensors[o].consumer_segment;
  for (int o = count - 1; o >= 0; --o) {
    const int producer = problem.tensors[o].producer;
    if (producer >= 0 && dropped(plan.placement[o]))
      latest[producer] = std::min(latest[producer], latest[o]);
  }

  // Placement, producers first: the latest window with spare capacity, else the cheapest of on
  // demand and the least overflow (on demand on ties).
  // The memory check of each trial moves only tensor o's live range (from on demand to the
  // window), so it updates the plan's live bytes instead of recounting every tensor.
  std::vector<double> load(problem.windows.size(), 0.0);
  std::vector<double> live = live_bytes(problem, plan);
  const double fixed_bytes = problem.static_bytes + problem.in_flight * kept_bytes(problem, plan);
  for (int o = 0; o < count; ++o) {
    if (!dropped(plan.placement[o]))
      continue;
    const OverlapTensor &tensor = problem.tensors[o];
    const int earliest = available_from(problem, plan, tensor.producer);
    int spare = -1, least = -1;
    double least_added = 0;
    add_live_range(problem, o, tensor.demand_segment, -tensor.bytes, live);
    // With o rebuilt at segment `start`, the peak is the largest of: the segments before start,
    // those from start to its consumer plus o, and those after the consumer.
    const int last = std::min(tensor.consumer_segment, static_cast<int>(live.size()) - 1);
    std::vector<double> before(live.size() + 1, 0.0), through_consumer(live.size() + 1, 0.0);
    for (std::size_t t = 0; t < live.size(); ++t)
      before[t + 1] = std::max(before[t], live[t]);
    for (int t = last; t >= 0; --t)
      through_consumer[t] = std::max(through_consumer[t + 1], live[t]);
    const double after = std::accumulate(live.begin() + last + 1, live.end(), 0.0,
                                         [](double a, double b) { return std::max(a, b); });
    const auto peak_from = [&](int start) {
      start = std::max(start, 0);
      return std::max({before[start], through_consumer[start] + tensor.bytes, after});
    };
    for (int w = 0; w < static_cast<int>(problem.windows.size()); ++w) {
      const OverlapWindow &window = problem.windows[w];
      if (window.position < earliest || window.position > latest[o])
        continue;
      if (fixed_bytes + peak_from(window.position) > problem.budget_bytes)
        continue;
      const double added = overflow(load[w] + tensor.recompute_ms, window.length_ms) -
                           overflow(load[w], window.length_ms);
      if (added == 0 && (spare < 0 || window.position >= problem.windows[spare].position))
        spare = w;
      if (least < 0 || added < least_added)
        least = w, least_added = added;
    }
    const bool demand_ok = earliest <= tensor.demand_segment;
    int chosen = spare;
    if (chosen < 0 && least >= 0 && (!demand_ok || least_added < tensor.recompute_ms))
      chosen = least;
    if (chosen >= 0) {
      plan.placement[o] = Placement::window;
      plan.window[o] = chosen;
      load[chosen] += tensor.recompute_ms;
    }
    add_live_range(problem, o, available_from(problem, plan, o), tensor.bytes, live);
  }
  // Memory checks above held with later tensors on demand; keep the baseline if the final plan
  // broke availability or cost more (it never should, the check is the guarantee).
  const OverlapCost cost = evaluate(problem, plan);
  if (!cost.feasible || cost.exposed_ms > evaluate(problem, baseline).exposed_ms)
    return baseline;
  return plan;
}

std::optional<OverlapPlan> lynx_milp(const OverlapProblem &problem,
                                     const solver::Options &options) {
  using solver::Sense;
  using solver::Term;
  solver::Model model;
  const int count = static_cast<int>(problem.tensors.size());
  const int windows = static_cast<int>(problem.windows.size());
  std::vector<int> keep(count), demand(count);
  std::vector<std::vector<int>> in_window(count, std::vector<int>(windows, -1)); // y_{o,w}
  for (int o = 0; o < count; ++o) {
    const OverlapTensor &tensor = problem.tensors[o];
    keep[o] = model.add_binary(fmt::format("s_{}", o));
    demand[o] = model.add_binary(fmt::format("q_{}", o), tensor.recompute_ms);
    std::vector<Term> one{{keep[o], 1}, {demand[o], 1}};
    for (int w = 0; w < windows; ++w) {
      if (problem.windows[w].position > tensor.consumer_segment)
        continue;
      in_window[o][w] = model.add_binary(fmt::format("y_{}_{}", o, w));
      one.push_back({in_window[o][w], 1});
    }
    model.add_constraint(fmt::format("place_{}", o), one, Sense::equal, 1);
  }
  // Window capacity: only the overflow is exposed.
  for (int w = 0; w < windows; ++w) {
    const int over = model.add_variable(fmt::format("over_{}", w), 0, solver::infinity,
                                        solver::VariableKind::continuous, 1);
    std::vector<Term> terms{{over, -1}};
    for (int o = 0; o < count; ++o) {
      if (in_window[o][w] >= 0)
        terms.push_back({in_window[o][w], problem.tensors[o].recompute_ms});
    }
    model.add_constraint(fmt::format("cap_{}", w), terms, Sense::less_equal,
                         problem.windows[w].length_ms);
  }
  // Producer availability at the recomputation's start point.
  const auto producer_terms = [&](int producer, int point, int variable) {
    std::vector<Term> terms{{variable, 1}, {keep[producer], -1}};
    if (problem.tensors[producer].demand_segment <= point)
      terms.push_back({demand[producer], -1});
    for (int w = 0; w < windows; ++w) {
      if (in_window[producer][w] >= 0 && problem.windows[w].position <= point) {
        terms.push_back({in_window[producer][w], -1});
      }
    }
    return terms;
  };
  for (int o = 0; o < count; ++o) {
    const int producer = problem.tensors[o].producer;
    if (producer < 0)
      continue;
    model.add_constraint(fmt::format("avail_q_{}", o),
                         producer_terms(producer, problem.tensors[o].demand_segment, demand[o]),
                         Sense::less_equal, 0);
    for (int w = 0; w < windows; ++w) {
      if (in_window[o][w] < 0)
        continue;
      model.add_constraint(fmt::format("avail_y_{}_{}", o, w),
                           producer_terms(producer, problem.windows[w].position, in_window[o][w]),
                           Sense::less_equal, 0);
    }
  }
  // Memory at every segment: kept tensors of the in-flight microbatches plus live recomputations.
  for (int t = 0; t < std::max(problem.segments, 1); ++t) {
    std::vector<Term> terms;
    for (int o = 0; o < count; ++o) {
      const OverlapTensor &tensor = problem.tensors[o];
      terms.push_back({keep[o], problem.in_flight * tensor.bytes});
      if (t > tensor.consumer_segment || t >= problem.segments)
        continue;
      if (tensor.demand_segment <= t)
        terms.push_back({demand[o], tensor.bytes});
      for (int w = 0; w < windows; ++w) {
        if (in_window[o][w] >= 0 && problem.windows[w].position <= t)
          terms.push_back({in_window[o][w], tensor.bytes});
      }
    }
    model.add_constraint(fmt::format("mem_{}", t), terms, Sense::less_equal,
                         problem.budget_bytes - problem.static_bytes);
  }
  const solver::MilpSolution result = solver::solve(model, options);
  if (!result.has_solution())
    return std::nullopt;
  OverlapPlan plan = keep_all(problem);
  for (int o = 0; o < count; ++o) {
    if (result.values[demand[o]] > 0.5)
      plan.placement[o] = Placement::on_demand;
    for (int w = 0; w < windows; ++w) {
      if (in_window[o][w] >= 0 && result.values[in_window[o][w]] > 0.5) {
        plan.placement[o] = Placement::window;
        plan.window[o] = w;
      }
    }
  }
  return plan;
}

OverlapProblem build_stage_problem(const std::vector<LayerProfile> &layers,
                                   double pipeline_window_ms, int in_flight, double static_bytes,
                                   double budget_bytes) {
  OverlapProblem problem;
  problem.in_flight = in_flight;
  problem.static_bytes = static_bytes;
  problem.budget_bytes = budget_bytes;
  problem.windows.push_back({"pipeline", pipeline_window_ms, 0});
  std::vector<int> base(layers.size());
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    // B runs the last layer first.
    base[l] = problem.segments;
    problem.segments += layers[l].backward_segments;
  }
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const LayerProfile &layer = layers[l];
    if (static_cast<int>(layer.backward_window_ms.size()) != layer.backward_segments) {
      throw Error("'backward_window_ms' needs one entry per backward segment");
    }
    problem.static_bytes += in_flight * layer.kept_bytes;
    const int offset = static_cast<int>(problem.tensors.size());
    for (OverlapTensor tensor : layer.tensors) {
      tensor.layer = static_cast<int>(l);
      tensor.name = fmt::format("{}.{}", l, tensor.name);
      if (tensor.producer >= 0)
        tensor.producer += offset;
      tensor.demand_segment += base[l];
      tensor.consumer_segment += base[l];
      problem.tensors.push_back(tensor);
    }
    for (std::size_t k = 0; k < layer.forward_window_ms.size(); ++k) {
      problem.windows.push_back({fmt::format("{}.fwd_tp{}", l, k), layer.forward_window_ms[k], 0});
    }
    for (int k = 0; k < layer.backward_segments; ++k) {
      problem.windows.push_back(
          {fmt::format("{}.bwd_tp{}", l, k), layer.backward_window_ms[k], base[l] + k + 1});
    }
  }
  return problem;
}

double all_reduce_ms(double bytes, const WindowModel &windows) {
  if (windows.tp <= 1)
    return 0;
  // GB/s = 1e6 bytes per ms.
  return 2.0 * (windows.tp - 1) / windows.tp * bytes / (windows.tp_bandwidth_gb_per_s * 1e6);
}

LayerProfile layer_profile(const CostRow &row, const WindowModel &windows) {
  const double collective = all_reduce_ms(row.output_bytes, windows);
  LayerProfile layer;
  layer.backward_segments = 2;
  layer.backward_window_ms = {collective, collective};
  layer.forward_window_ms = {collective, collective};
  layer.kept_bytes = row.stored_input_bytes;
  const double core_bytes =
      std::max(0.0, row.activation_bytes_full - row.activation_bytes_selective);
  const double rest_bytes = std::max(0.0, row.activation_bytes_selective - row.stored_input_bytes);
  if (core_bytes > 0) {
    layer.tensors.push_back(
        {"attention_core", 0, to_double(row.recompute_selective_ms), core_bytes, -1, 0, 1});
  }
  if (rest_bytes > 0) {
    layer.tensors.push_back(
        {"block_rest", 0,
         std::max(0.0, to_double(row.recompute_ms) - to_double(row.recompute_selective_ms)),
         rest_bytes, -1, 0, 0});
  }
  return layer;
}

} // namespace ppsim
