#include "sim/scenario_builder.h"
#include "base/index.h"

#include "base/decimal.h"
#include "base/error.h"
#include "costs/cost_file.h"
#include "costs/stage_sums.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace ppsim {
double units_per_second(const ScenarioInput &input) {
  if (input.time_unit == "s")
    return 1.0;
  if (input.time_unit == "ms")
    return 1e3;
  if (input.time_unit == "us")
    return 1e6;
  input.fail("model.time_unit",
             fmt::format("expected \"s\", \"ms\" or \"us\", got \"{}\"",
                         cut_for_message(input.time_unit)));
}

namespace {

template <typename T>
T per_stage(const ScenarioInput &input, const std::string &key, const std::vector<T> &values,
            int stage_count, int stage) {
  if (values.size() == 1)
    return values.front();
  if (values.size() != at(stage_count)) {
    input.fail(key, fmt::format("expected 1 or {} values (one per stage), got {}", stage_count,
                                values.size()));
  }
  return values[at(stage)];
}

struct RationalCosts {
  Rational forward, backward_input, backward_weight, recompute, recompute_weight, recompute_full;
};

// The field whose largest value weighs most in the run's time, for an error about time range.
// `transfer_links` names the link of each boundary: "cluster.link" or "cluster.inter_node_link".
const char *largest_time_field(const ScenarioInput &input, const std::vector<RationalCosts> &costs,
                               const std::vector<Rational> &transfers,
                               const std::vector<bool> &inter_node) {
  const auto units = [](Rational r) {
    return static_cast<long double>(r.numerator) / r.denominator;
  };
  std::pair<long double, const char *> largest{-1, "model.F"};
  const auto consider = [&](Rational r, const char *key) {
    largest = std::max(largest, std::pair{units(r), key});
  };
  for (const RationalCosts &c : costs) {
    consider(c.forward, "model.F");
    consider(c.backward_input, "model.B");
    consider(c.backward_weight, "model.W");
    if (!input.recompute_forward.empty())
      consider(c.recompute, "model.R");
    if (!input.recompute_weight_inputs.empty())
      consider(c.recompute_weight, "model.RW");
    if (!input.recompute_full_backward.empty())
      consider(c.recompute_full, "model.RBW");
  }
  const bool sized = !input.bytes.output.empty();
  for (std::size_t b = 0; b < transfers.size(); ++b)
    consider(transfers[b], inter_node[b] ? (sized ? "cluster.inter_node_link.bandwidth"
                                                  : "cluster.inter_node_link.latency")
                                         : (sized ? "cluster.link.bandwidth"
                                                  : "cluster.link.latency"));
  if (input.overlap_fb)
    consider(*input.overlap_fb, "pipeline.overlap_fb");
  consider(input.op_overhead, "cluster.op_overhead");
  return largest.second;
}

// Time range (docs/model.md, "Time"): no run of the scenario can take longer than every op of
// every microbatch and every transfer one after the other, so keeping that sum below 2^62 ticks
// keeps every event time, span and sum of the engine, the bounds and the reports exact in 64
// bits. True when the scenario's times are within it.
bool within_time_range(const Scenario &scenario) {
  __extension__ using Int128 = __int128;
  constexpr Int128 kLimit = Int128{1} << 62;
  Int128 per_microbatch = 0;
  for (const StageCosts &c : scenario.stage_costs) {
    per_microbatch += Int128{c.forward.count()} + c.backward_input.count() +
                      c.backward_weight.count() + c.recompute_forward.count() +
                      std::max(c.recompute_weight_inputs, c.recompute_full_backward).count();
    if (scenario.overlap_duration)
      per_microbatch += scenario.overlap_duration->count();
    per_microbatch += 3 * Int128{scenario.op_overhead.count()}; // F, B and W actions at most
  }
  for (const Ticks transfer : scenario.boundary_transfer)
    per_microbatch += 2 * Int128{transfer.count()};
  Int128 end = 0; // the iteration's end, once
  for (std::size_t g = 0; g < scenario.iteration_end.all_reduce.size(); ++g)
    end += Int128{scenario.iteration_end.all_reduce[g].count()} +
           scenario.iteration_end.optimizer[g].count();
  return per_microbatch * scenario.microbatches + end < kLimit;
}

// Refuses a transfer of `bytes` at `bandwidth` bytes/s that takes longer than any run ppsim
// times exactly (docs/model.md, "Time"), naming `key`, the size that makes it so.
[[noreturn]] void refuse_long_transfer(const ScenarioInput &input, const char *key, double bytes,
                                       double bandwidth) {
  input.fail(key, fmt::format("a transfer of {:g} bytes at {:g} bytes/s takes {:g} s, beyond the "
                              "range ppsim times exactly (2^62 ticks of the run's {} scale); use "
                              "a smaller size or a larger bandwidth",
                              bytes, bandwidth, bytes / bandwidth, input.time_unit));
}

// `bytes` at `bandwidth` bytes/s in the input's time units, as an exact rational.
Rational serialization_time(const ScenarioInput &input, const char *key, double bytes,
                            double bandwidth) {
  const double units = bytes / bandwidth * units_per_second(input);
  const std::optional<Rational> time =
      units < 0x1p62 ? rational_from_double(units) : std::nullopt;
  if (!time)
    refuse_long_transfer(input, key, bytes, bandwidth);
  return *time;
}

// The iteration's end per device (docs/model.md, "The iteration's end"): the ring all-reduce of
// its gradients over d replicas, 2 (d - 1) alpha + 2 (d - 1) / d G / beta (Patarasuk and Yuan,
// "Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 2009; NCCL's
// ring), and its optimizer step. Refuses the fields when no end is asked for.
void iteration_end_times(const ScenarioInput &input, const Scenario &scenario,
                         std::vector<Rational> &all_reduce, std::vector<Rational> &optimizer) {
  const int devices = scenario.devices;
  all_reduce.assign(at(devices), Rational{0, 1});
  optimizer.assign(at(devices), Rational{0, 1});
  if (input.iteration_end == IterationEnd::none) {
    const auto refuse = [&](const char *key) {
      input.fail(key, "has no effect without the iteration's end: set iteration.end to "
                      "\"sync\" or \"post-validation\"");
    };
    if (!input.optimizer_step.empty())
      refuse("iteration.optimizer");
    if (input.data_parallel != 1)
      refuse("cluster.data_parallel");
    if (input.data_parallel_latency != Rational{0, 1})
      refuse("cluster.data_parallel_link.latency");
    if (std::isfinite(input.data_parallel_bandwidth_bytes_per_second))
      refuse("cluster.data_parallel_link.bandwidth");
    return;
  }
  if (!input.optimizer_step.empty() && input.optimizer_step.size() != 1 &&
      input.optimizer_step.size() != at(devices))
    input.fail("iteration.optimizer",
               fmt::format("expected 1 or {} values (one per device), got {}", devices,
                           input.optimizer_step.size()));
  for (int g = 0; g < devices; ++g) {
    if (input.optimizer_step.empty())
      break;
    optimizer[at(g)] = input.optimizer_step.size() == 1 ? input.optimizer_step.front()
                                                        : input.optimizer_step[at(g)];
    if (optimizer[at(g)].numerator < 0)
      input.fail("iteration.optimizer", "expected a non-negative duration");
  }
  const std::int64_t d = input.data_parallel;
  const bool bandwidth_given = std::isfinite(input.data_parallel_bandwidth_bytes_per_second);
  if (d == 1) {
    // One replica reduces nothing: its link's values would be ignored.
    for (const auto &[given, key] :
         {std::pair{input.data_parallel_latency != Rational{0, 1},
                    "cluster.data_parallel_link.latency"},
          std::pair{bandwidth_given, "cluster.data_parallel_link.bandwidth"}})
      if (given)
        input.fail(key, "has no effect with one data-parallel replica: set cluster.data_parallel");
    return;
  }
  if (input.data_parallel_latency.numerator < 0)
    input.fail("cluster.data_parallel_link.latency", "expected a non-negative duration");
  if (bandwidth_given && input.bytes.gradients.empty() && input.bytes.parameters.empty())
    input.fail("cluster.data_parallel_link.bandwidth",
               "the all-reduce's time needs the gradients' bytes: give a cost file, "
               "model.memory.grad_bytes or model.memory.param_bytes");
  // Gradient bytes per device, one device's share under cost_unit = "device" (as build_memory).
  const int stage_count = scenario.stage_count();
  const double share_divisor = input.costs_per_device ? scenario.chunks : 1;
  std::vector<double> gradients(at(devices), 0.0);
  const std::vector<double> &sizes =
      input.bytes.gradients.empty() ? input.bytes.parameters : input.bytes.gradients;
  const char *key =
      input.bytes.gradients.empty() ? "model.memory.param_bytes" : "model.memory.grad_bytes";
  for (int s = 0; s < stage_count && !sizes.empty(); ++s)
    gradients[at(scenario.stage_device[at(s)])] +=
        per_stage(input, key, sizes, stage_count, s) / share_divisor;
  for (int g = 0; g < devices; ++g) {
    const double bytes =
        2.0 * static_cast<double>(d - 1) / static_cast<double>(d) * gradients[at(g)];
    const double bandwidth = input.data_parallel_bandwidth_bytes_per_second;
    const char *field = "cluster.data_parallel_link.bandwidth";
    try {
      all_reduce[at(g)] = Rational{2 * (d - 1), 1} * input.data_parallel_latency;
      if (std::isfinite(bandwidth) && bytes > 0)
        all_reduce[at(g)] = all_reduce[at(g)] + serialization_time(input, field, bytes, bandwidth);
    } catch (const std::overflow_error &) {
      refuse_long_transfer(input, field, bytes, bandwidth);
    }
  }
}

// Whether the boundary after stage s joins devices of different nodes (cluster.gpus_per_node).
bool crosses_nodes(const ScenarioInput &input, const Scenario &scenario, int s) {
  if (input.gpus_per_node == 0 || s + 1 >= scenario.stage_count())
    return false;
  return scenario.stage_device[at(s)] / input.gpus_per_node !=
         scenario.stage_device[at(s + 1)] / input.gpus_per_node;
}

// The link model of cluster.runtime's preset (docs/model.md, "Runtimes"), or of the link's own
// fields; a field the preset sets is refused beside it.
LinkModel link_model(const ScenarioInput &input) {
  if (!input.runtime)
    return LinkModel{input.contention, input.blocking};
  for (const char *key : {"cluster.link.contention", "cluster.link.blocking"})
    if (input.origins.contains(key))
      input.fail(key, "is set by cluster.runtime; give one of them");
  switch (*input.runtime) {
  case Runtime::ideal:
    return LinkModel{false, false};
  case Runtime::torch:
    return LinkModel{true, false};
  case Runtime::megatron:
    break;
  }
  return LinkModel{true, true};
}

// The links' fields (cluster.link, cluster.gpus_per_node, cluster.inter_node_link), each
// refused where it would change nothing.
void check_links(const ScenarioInput &input) {
  const bool inter_latency = input.inter_node_latency != Rational{0, 1};
  const bool inter_bandwidth = std::isfinite(input.inter_node_bandwidth_bytes_per_second);
  if (input.bytes.output.empty())
    for (const auto &[given, key] :
         {std::pair{std::isfinite(input.bandwidth_bytes_per_second), "cluster.link.bandwidth"},
          std::pair{inter_bandwidth, "cluster.inter_node_link.bandwidth"}})
      if (given)
        input.fail(key, "a transfer's time needs the outputs' bytes: give a cost file with "
                        "output_bytes or model.memory.out_bytes");
  if (input.inter_node_latency.numerator < 0)
    input.fail("cluster.inter_node_link.latency", "expected a non-negative duration");
  if (input.gpus_per_node == 0) {
    for (const auto &[given, key] :
         {std::pair{inter_latency, "cluster.inter_node_link.latency"},
          std::pair{inter_bandwidth, "cluster.inter_node_link.bandwidth"}})
      if (given)
        input.fail(key, "has no effect without cluster.gpus_per_node: every device is on one "
                        "node");
  } else if (!inter_latency && !inter_bandwidth) {
    input.fail("cluster.gpus_per_node",
               "has no effect without cluster.inter_node_link (its latency or bandwidth): the "
               "nodes would be joined by cluster.link");
  } else if (input.gpus_per_node >= input.devices) {
    input.fail("cluster.gpus_per_node",
               fmt::format("has no effect: the {} devices fit on one node of {}, so no boundary "
                           "takes cluster.inter_node_link",
                           input.devices, input.gpus_per_node));
  } else if (input.gpus_per_node == 1) {
    for (const char *key : {"cluster.link.latency", "cluster.link.bandwidth"})
      if (input.origins.contains(key))
        input.fail(key, "has no effect with cluster.gpus_per_node = 1: every boundary joins two "
                        "nodes, over cluster.inter_node_link");
  }
}

void build_times(const ScenarioInput &input, Scenario &scenario) {
  const int stage_count = scenario.stage_count();
  const std::int64_t divisor = input.costs_per_device ? scenario.chunks : 1;
  std::vector<RationalCosts> costs(at(stage_count));
  std::vector<Rational> transfers(at(stage_count));
  std::vector<bool> inter_node(at(stage_count), false);
  std::vector<Rational> selective_recompute;
  const auto value = [&](const char *key, const std::vector<Rational> &values, int s) {
    const Rational r = per_stage(input, key, values, stage_count, s);
    if (r.numerator < 0) {
      input.fail(key, fmt::format("expected a non-negative duration, got {}/{}", r.numerator,
                                  r.denominator));
    }
    return r / divisor;
  };
  try {
    for (int s = 0; s < stage_count; ++s) {
      RationalCosts &c = costs[at(s)];
      c.forward = value("model.F", input.forward, s);
      c.backward_input = value("model.B", input.backward_input, s);
      c.backward_weight = value("model.W", input.backward_weight, s);
      c.recompute = input.recompute_forward.empty() ? c.forward
                                                    : value("model.R", input.recompute_forward, s);
      c.recompute_weight = input.recompute_weight_inputs.empty()
                               ? c.forward
                               : value("model.RW", input.recompute_weight_inputs, s);
      c.recompute_full = input.recompute_full_backward.empty()
                             ? c.forward + c.backward_input
                             : value("model.RBW", input.recompute_full_backward, s);
      inter_node[at(s)] = crosses_nodes(input, scenario, s);
      const Rational latency = inter_node[at(s)] ? input.inter_node_latency : input.latency;
      const double bandwidth = inter_node[at(s)] ? input.inter_node_bandwidth_bytes_per_second
                                                 : input.bandwidth_bytes_per_second;
      transfers[at(s)] = latency;
      if (!input.bytes.output.empty() && std::isfinite(bandwidth)) {
        // A transfer longer than any run ppsim times exactly (docs/model.md, "Time") is refused
        // here, naming the size that makes it so, before its rational overflows.
        const double bytes =
            per_stage(input, "model.memory.out_bytes", input.bytes.output, stage_count, s);
        const Rational serialization =
            serialization_time(input, "model.memory.out_bytes", bytes, bandwidth);
        try {
          transfers[at(s)] = latency + serialization;
        } catch (const std::overflow_error &) {
          refuse_long_transfer(input, "model.memory.out_bytes", bytes, bandwidth);
        }
      }
    }
    // Selective recomputation's R becomes a level of the remat ILP (remat/baselines.h,
    // with_selective_level): in whole ticks of this scenario too.
    if (!input.recompute_selective.empty()) {
      for (int s = 0; s < stage_count; ++s)
        selective_recompute.push_back(value("model.R_selective", input.recompute_selective, s));
    }
  } catch (const std::overflow_error &) {
    throw Error("durations are too fine to represent exactly; use fewer decimal places");
  }
  std::vector<Rational> all;
  all.reserve(8 * costs.size() + 2);
  for (const RationalCosts &c : costs) {
    all.insert(all.end(), {c.forward, c.backward_input, c.backward_weight, c.recompute,
                           c.recompute_weight, c.recompute_full});
  }
  all.insert(all.end(), selective_recompute.begin(), selective_recompute.end());
  all.insert(all.end(), transfers.begin(), transfers.end());
  if (input.overlap_fb)
    all.push_back(*input.overlap_fb);
  if (input.op_overhead.numerator < 0)
    input.fail("cluster.op_overhead", "expected a non-negative duration");
  all.push_back(input.op_overhead);
  std::vector<Rational> all_reduce, optimizer;
  iteration_end_times(input, scenario, all_reduce, optimizer);
  all.insert(all.end(), all_reduce.begin(), all_reduce.end());
  all.insert(all.end(), optimizer.begin(), optimizer.end());
  scenario.time_scale = scale_for(all.data(), all.size());
  const TimeScale &scale = scenario.time_scale;
  try {
    for (const RationalCosts &c : costs) {
      scenario.stage_costs.push_back({scale.to_ticks(c.forward),
                                      scale.to_ticks(c.backward_input),
                                      scale.to_ticks(c.backward_weight),
                                      scale.to_ticks(c.recompute),
                                      scale.to_ticks(c.recompute_weight),
                                      scale.to_ticks(c.recompute_full),
                                      {}});
    }
    for (const Rational &t : transfers)
      scenario.boundary_transfer.push_back(scale.to_ticks(t));
    if (input.overlap_fb)
      scenario.overlap_duration = scale.to_ticks(*input.overlap_fb);
    scenario.op_overhead = scale.to_ticks(input.op_overhead);
    IterationEndModel &end = scenario.iteration_end;
    end.mode = input.iteration_end;
    end.data_parallel = input.data_parallel;
    for (int g = 0; g < scenario.devices; ++g) {
      end.all_reduce.push_back(scale.to_ticks(all_reduce[at(g)]));
      end.optimizer.push_back(scale.to_ticks(optimizer[at(g)]));
    }
    if (!within_time_range(scenario))
      throw std::overflow_error("time range");
  } catch (const std::overflow_error &) {
    input.fail(
        largest_time_field(input, costs, transfers, inter_node),
        fmt::format("every op of every microbatch one after the other would exceed the 2^62 ticks "
                    "ppsim times in exactly ({} ticks per {}); use smaller values or a coarser "
                    "model.time_unit",
                    scale.ticks_per_unit, input.time_unit));
  }
}

// Bytes that grow with the layers a stage holds (activations, parameters and their state) are
// one device's share under cost_unit = "device" and are split over its chunks like the times; a
// chunk's boundary tensors and its per-layer transient peaks keep their size (docs/scenario.md).
void build_memory(const ScenarioInput &input, Scenario &scenario) {
  const int stage_count = scenario.stage_count();
  const double share_divisor = input.costs_per_device ? scenario.chunks : 1;
  const auto device_of = [&](int s) { return scenario.stage_device[at(s)]; };
  const auto byte_value = [&](const char *key, const std::vector<double> &values, int s,
                              double fallback) {
    if (values.empty())
      return fallback;
    const double v = per_stage(input, key, values, stage_count, s);
    if (!(v >= 0))
      input.fail(key, fmt::format("expected a non-negative byte size, got {}", v));
    return v;
  };
  const auto layer_bytes = [&](const char *key, const std::vector<double> &values, int s,
                               double fallback) {
    return values.empty() ? fallback : byte_value(key, values, s, fallback) / share_divisor;
  };
  const bool have_bytes = !input.bytes.activation.empty();
  // a_s = act_s / sum of act on the device (docs/model.md, "Memory models"); uniform chunks give
  // 1/v.
  std::vector<double> device_activation(at(scenario.devices), 0.0);
  std::vector<double> activation(at(stage_count), 1.0);
  if (have_bytes) {
    for (int s = 0; s < stage_count; ++s) {
      activation[at(s)] = layer_bytes("model.memory.act_bytes", input.bytes.activation, s, 0.0);
    }
  }
  for (int s = 0; s < stage_count; ++s) {
    device_activation[at(device_of(s))] += activation[at(s)];
  }
  if (!(input.w_stash >= 0 && input.w_stash <= 1)) {
    input.fail("model.w_stash",
               fmt::format("expected a fraction in [0, 1], got {}", input.w_stash));
  }
  if (!(input.m_ba_fraction >= 0 && input.m_ba_fraction <= 1)) {
    input.fail("model.memory.m_ba_fraction",
               fmt::format("expected a fraction in [0, 1], got {}", input.m_ba_fraction));
  }
  if (input.optimizer_shards < 1) {
    input.fail(
        "cluster.optimizer_shards",
        fmt::format("expected at least 1 data-parallel rank, got {}", input.optimizer_shards));
  }

  MemoryTrack &count = scenario.activations;
  count.device_constant.assign(at(scenario.devices), 0.0);
  for (int s = 0; s < stage_count; ++s) {
    const double share = device_activation[at(device_of(s))];
    StageMemory stage;
    stage.stored = share > 0 ? activation[at(s)] / share : 0.0;
    stage.kept_after_b = input.w_stash * stage.stored;
    if (input.memory_model == MemoryModel::zb) {
      stage.stored = byte_value("model.memory.mem_f", input.zb_mem_f, s, stage.stored);
      // mem_w is the (negative) change W makes, as in the zero-bubble code's GraphConfig.
      stage.kept_after_b = input.zb_mem_w.empty() ? input.w_stash * stage.stored
                                                  : -per_stage(input, "model.memory.mem_w",
                                                               input.zb_mem_w, stage_count, s);
      if (stage.kept_after_b < 0 || stage.kept_after_b > stage.stored) {
        input.fail("model.memory.mem_w", "expected -mem_f <= mem_w <= 0");
      }
    }
    stage.weight_input_share = input.m_ba_fraction * stage.kept_after_b;
    stage.kept_after_w = input.w_residue * stage.stored;
    if (stage.kept_after_w > stage.kept_after_b) {
      input.fail("model.w_residue", fmt::format("W cannot leave more ({}) than B keeps for it ({})",
                                                input.w_residue, input.w_stash));
    }
    count.stages.push_back(stage);
  }

  // What a device holds from start to end: weights, their gradients and the optimizer states
  // (sharded over the data-parallel ranks), docs/model.md "Device memory".
  std::vector<double> resident_state(at(scenario.devices), 0.0);
  if (have_bytes) {
    MemoryTrack bytes;
    for (int s = 0; s < stage_count; ++s) {
      StageMemory stage;
      stage.stored = activation[at(s)];
      stage.kept_after_b = layer_bytes("model.memory.kept_after_b", input.bytes.kept_after_b, s,
                                       input.w_stash * stage.stored);
      stage.weight_input_share =
          layer_bytes("model.memory.weight_input_bytes", input.bytes.weight_inputs, s,
                      input.m_ba_fraction * stage.kept_after_b);
      stage.kept_after_w = layer_bytes("model.memory.kept_after_w", input.bytes.kept_after_w, s,
                                       input.w_residue * stage.stored);
      if (stage.kept_after_w > stage.kept_after_b) {
        input.fail("model.memory.kept_after_w",
                   fmt::format("stage {} keeps {} after W, more than the {} B keeps for it", s,
                               format_bytes(stage.kept_after_w), format_bytes(stage.kept_after_b)));
      }
      stage.checkpoint = byte_value("model.memory.ckpt_bytes", input.bytes.checkpoint, s, 0.0);
      stage.peak_forward = byte_value("model.memory.peak_f", input.bytes.peak_forward, s, 0.0);
      stage.peak_backward_input =
          byte_value("model.memory.peak_b", input.bytes.peak_backward_input, s, 0.0);
      stage.peak_backward_weight =
          byte_value("model.memory.peak_w", input.bytes.peak_backward_weight, s, 0.0);
      stage.peak_checkpointed_forward =
          byte_value("model.memory.peak_ckpt", input.bytes.peak_checkpoint, s, 0.0);
      bytes.stages.push_back(stage);
      const double parameters =
          layer_bytes("model.memory.param_bytes", input.bytes.parameters, s, 0.0);
      resident_state[at(device_of(s))] += resident_state_bytes(
          parameters, layer_bytes("model.memory.grad_bytes", input.bytes.gradients, s, parameters),
          layer_bytes("model.memory.optimizer_bytes", input.bytes.optimizer, s, 0.0),
          input.optimizer_shards);
    }
    if (!(input.runtime_bytes >= 0))
      input.fail("cluster.runtime_bytes", "expected a byte size >= 0");
    for (double &resident : resident_state)
      resident += input.runtime_bytes;
    bytes.device_constant = resident_state;
    scenario.bytes = std::move(bytes);
  }

  if (input.cap_activations) {
    if (!(*input.cap_activations > 0))
      input.fail("cluster.K", "expected a positive cap");
    count.cap = *input.cap_activations;
  }
  if (input.budget_bytes) {
    if (!have_bytes) {
      input.fail("cluster.memory", "a byte budget needs byte sizes (model.memory.act_bytes)");
    }
    if (input.memory_model == MemoryModel::bytes) {
      scenario.bytes->cap = *input.budget_bytes;
    } else if (!input.cap_activations) {
      // K = (bytes - resident state) / (one device's share of one microbatch's activation
      // bytes), the strictest device deciding (docs/scenario.md, cluster.memory).
      double k = std::numeric_limits<double>::infinity();
      for (int g = 0; g < scenario.devices; ++g) {
        const auto d = at(g);
        if (device_activation[d] > 0) {
          k = std::min(k, (*input.budget_bytes - resident_state[d]) / device_activation[d]);
        }
      }
      if (!(k > 0)) {
        input.fail("cluster.memory",
                   fmt::format("the budget does not even hold the weights, gradients "
                               "and optimizer states ({} on the fullest device)",
                               format_bytes(*std::max_element(resident_state.begin(),
                                                              resident_state.end()))));
      }
      count.cap = k;
      scenario.cap_from_budget = *input.budget_bytes;
    }
  } else if (input.memory_model == MemoryModel::bytes && !have_bytes) {
    input.fail("cluster.memory_model", "the byte model needs model.memory.act_bytes");
  }
}

// p and m as a user may have written them (flags and files check their types, not the values
// a sweep or a program may set).
void check_counts(const ScenarioInput &input) {
  if (input.devices < 1) {
    input.fail("cluster.devices", fmt::format("expected at least 1 device, got {}", input.devices));
  }
  if (input.microbatches < 1) {
    input.fail("pipeline.microbatches",
               fmt::format("expected at least 1 microbatch, got {}", input.microbatches));
  }
}

} // namespace

void check_run_size(const ScenarioInput &input, std::int64_t stages, std::int64_t microbatches) {
  __extension__ using Int128 = __int128;
  const Int128 ops = Int128{stages} * microbatches * kOpsPerStageAndMicrobatch;
  if (ops <= kMaxOps)
    return;
  // Blame the largest factor: m, else p or v (stages = v p).
  const char *field = microbatches >= stages ? "pipeline.microbatches"
                      : input.chunks > input.devices ? "pipeline.chunks"
                                                     : "cluster.devices";
  input.fail(
      field,
      fmt::format(
          "{} stages x {} microbatches make about {} ops, above ppsim's limit of {} (about 150 "
          "bytes each)",
          stages, microbatches, format_readable(static_cast<double>(ops)), kMaxOps));
}

SourceLocation ScenarioInput::locate(const std::string &key) const {
  const auto found = origins.find(key);
  if (found != origins.end())
    return found->second;
  return SourceLocation{"", 0, key};
}

bool ScenarioInput::measures_selective() const {
  const bool time = std::any_of(recompute_selective.begin(), recompute_selective.end(),
                                [](const Rational &r) { return r.numerator > 0; });
  const std::vector<double> &kept = bytes.selective_activation;
  return time && std::any_of(kept.begin(), kept.end(), [](double b) { return b > 0; });
}

void ScenarioInput::fail(const std::string &key, const std::string &sentence) const {
  const SourceLocation where = locate(key);
  throw Error(where.file, where.line, where.field, sentence);
}

Scenario build_scenario_on(const ScenarioInput &input, std::vector<int> placement, int chunks,
                           int pipes, RunSize size) {
  check_counts(input);
  check_run_size(input, static_cast<std::int64_t>(placement.size()),
                 size == RunSize::orders ? input.microbatches / pipes : 1);
  Scenario scenario;
  scenario.model_name = input.model_name;
  scenario.devices = input.devices;
  scenario.chunks = chunks;
  scenario.pipes = pipes;
  scenario.microbatches = input.microbatches / pipes;
  scenario.stage_device = std::move(placement);
  check_links(input);
  scenario.link = link_model(input);
  scenario.remat_timing = input.remat_timing;
  scenario.memory_model = input.memory_model;
  scenario.units_per_second = units_per_second(input);
  build_times(input, scenario);
  build_memory(input, scenario);
  return scenario;
}

Scenario build_scenario(const ScenarioInput &input, const ScheduleInfo &schedule, RunSize size) {
  check_counts(input);
  const int chunks = schedule.chunks(input.chunks);
  if (input.chunks < 0)
    input.fail("pipeline.chunks", fmt::format("expected v >= 1, got {}", input.chunks));
  const int pipes = schedule.pipes();
  switch (schedule.placement) {
  case PlacementKind::single_wave:
  case PlacementKind::dual_pipe:
    if (chunks != 1) {
      input.fail("pipeline.chunks", fmt::format("schedule '{}' places one stage per device and "
                                                "pipe, so v must be 1, got {}",
                                                schedule.name, chunks));
    }
    break;
  case PlacementKind::round_robin:
    break;
  case PlacementKind::v_shape:
    if (chunks % 2 != 0) {
      input.fail("pipeline.chunks", fmt::format("schedule '{}' uses a V placement, so v must be "
                                                "even, got {}",
                                                schedule.name, chunks));
    }
    break;
  }
  if (pipes == 2 && input.microbatches % 2 != 0) {
    input.fail("pipeline.microbatches",
               fmt::format("schedule '{}' splits the microbatches over two pipes, so m must be "
                           "even, got {}",
                           schedule.name, input.microbatches));
  }
  check_run_size(input, std::int64_t{input.devices} * chunks * pipes,
                 size == RunSize::orders ? input.microbatches / pipes : 1);
  return build_scenario_on(input, make_placement(schedule.placement, input.devices, chunks), chunks,
                           pipes, size);
}

} // namespace ppsim
