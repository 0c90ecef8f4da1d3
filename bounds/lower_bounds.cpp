// Lower bounds of docs/bounds.md, "The bounds". Each device-level bound is a window
// [earliest first start, makespan - shortest tail] that must contain the device's work and,
// divided by the cap, its memory-time integral.
#include "bounds/lower_bounds.h"
#include "base/index.h"

#include "base/assert.h"
#include "sim/memory.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ppsim {
namespace {

Ticks full_backward(const StageCosts &costs, BackwardForm form) {
  return form == BackwardForm::full ? costs.backward_input + costs.backward_weight
                                    : costs.backward_input;
}

/// c_s X(s): the transfer between stage s and s+1 when they sit on different devices.
Ticks crossing(const Scenario &scenario, int stage) {
  if (scenario.is_pipe_exit(stage))
    return Ticks{0};
  if (scenario.stage_device[at(stage)] == scenario.stage_device[at(stage + 1)])
    return Ticks{0};
  if (at(stage) >= scenario.boundary_transfer.size())
    return Ticks{0};
  return scenario.boundary_transfer[at(stage)];
}

/// Ceiling of a non-negative tick value computed in floating point, forgiving the rounding
/// error of the division by K (1e-9 relative), so exact integers stay exact.
Ticks ceil_ticks(double value) {
  const double tolerance = 1e-9 * std::max(1.0, std::abs(value));
  return Ticks{static_cast<std::int64_t>(std::ceil(value - tolerance))};
}

/// Stages of every device, in stage order.
std::vector<std::vector<int>> stages_by_device(const Scenario &scenario) {
  std::vector<std::vector<int>> stages(at(scenario.devices));
  for (int s = 0; s < scenario.stage_count(); ++s)
    stages[at(scenario.stage_device[at(s)])].push_back(s);
  return stages;
}

struct Window {
  Ticks head; ///< min PF over the device's stages
  Ticks tail; ///< min PB over the device's stages
};

Window window_of(const PathProfile &profile, const std::vector<int> &stages) {
  Window window{Ticks{std::numeric_limits<std::int64_t>::max()},
                Ticks{std::numeric_limits<std::int64_t>::max()}};
  for (const int s : stages) {
    window.head = std::min(window.head, profile.forward_prefix[at(s)]);
    window.tail = std::min(window.tail, profile.backward_suffix[at(s)]);
  }
  return window;
}

/// What a device's bound adds to its time: nothing (the span), the head of its window, or its
/// head and tail (docs/bounds.md, "The bounds").
enum class WindowPart { none, head, head_and_tail };

/// The largest `device_time(g, stages of g)` plus that device's window part over the devices
/// that hold stages, at least `floor`: the one shape of LB1, LB2, LB3 and span_LB.
template <typename DeviceTime>
Ticks device_bound(const Scenario &scenario, const PathProfile &profile, WindowPart part,
                   Ticks floor, const DeviceTime &device_time) {
  const std::vector<std::vector<int>> stages = stages_by_device(scenario);
  Ticks best = floor;
  for (int g = 0; g < scenario.devices; ++g) {
    if (stages[at(g)].empty())
      continue;
    const Window window = window_of(profile, stages[at(g)]);
    const Ticks around = part == WindowPart::none   ? Ticks{0}
                         : part == WindowPart::head ? window.head
                                                    : window.head + window.tail;
    best = std::max(best, around + device_time(g, stages[at(g)]));
  }
  return best;
}

/// F + Bf of `stages`, one microbatch each.
Ticks busy_per_microbatch(const Scenario &scenario, const std::vector<int> &stages,
                          BackwardForm form) {
  Ticks busy{0};
  for (const int s : stages) {
    const StageCosts &costs = scenario.stage_costs[at(s)];
    busy += costs.forward + full_backward(costs, form);
  }
  return busy;
}

/// Which lifespans and busy time a memory-time bound uses.
enum class MemoryTimeVariant {
  lb2,    ///< busy F + Bf, lifespans with Bf (docs/bounds.md, "LB2 in detail")
  with_w, ///< busy F + B + W, W-stash share held while W runs (docs/bounds.md, "The bounds")
};

/// Stage `s`'s checkpoint levels that have both a time and a memory (sim/validate.cpp).
std::span<const CheckpointLevelMemory> levels_of(const Scenario &scenario, int s) {
  const std::vector<CheckpointLevelMemory> &levels =
      scenario.activations.stages[at(s)].checkpoint_levels;
  return {levels.data(),
          std::min(levels.size(), scenario.stage_costs[at(s)].checkpoint_level_recompute.size())};
}

/// The least of stage `s`'s activation any plan holds at once: the whole record (kept, or
/// rebuilt by R or a selective level before the backward), or a checkpoint level's walk, which
/// never holds more than its part and its backward peak (sim/memory.cpp, sub_op_effect).
double least_resident(const Scenario &scenario, int s) {
  const StageMemory &memory = scenario.activations.stages[at(s)];
  double least = memory.stored;
  for (const CheckpointLevelMemory &level : levels_of(scenario, s))
    if (!level.selective)
      least = std::min(least, std::max(level.kept, level.backward_peak));
  return least;
}

/// The memory-time minimum of every device, or nullopt when the cap is below what any plan
/// holds of some stage (least_resident). Without a cap the value is the plain busy time.
std::optional<std::vector<double>> device_memory_time(const Scenario &scenario, BackwardForm form,
                                                      const PathProfile &profile,
                                                      MemoryTimeVariant variant) {
  const std::vector<std::vector<int>> stages = stages_by_device(scenario);
  const std::optional<double> cap = scenario.activations.cap;
  const int m = scenario.microbatches;
  std::vector<double> values(at(scenario.devices), 0.0);
  std::vector<MemoryTimeStage> device_stages;
  for (int g = 0; g < scenario.devices; ++g) {
    device_stages.clear();
    for (const int s : stages[at(g)]) {
      const StageCosts &costs = scenario.stage_costs[at(s)];
      const StageMemory &memory = scenario.activations.stages[at(s)];
      const double bf = static_cast<double>(full_backward(costs, form).count());
      MemoryTimeStage stage;
      stage.unit = memory.stored;
      stage.recompute = static_cast<double>(costs.recompute_forward.count());
      stage.busy = static_cast<double>(costs.forward.count()) + bf;
      stage.kept_lifespan = static_cast<double>(profile.kept_lifespan[at(s)].count());
      stage.recomputed_lifespan = stage.recompute + bf;
      // The W-stashed share is resident at least while W runs, whatever the forward's option.
      double w_stash_time = 0;
      if (variant == MemoryTimeVariant::with_w && form == BackwardForm::split) {
        const double w = static_cast<double>(costs.backward_weight.count());
        const double w_stash = memory.stored > 0 ? memory.kept_after_b / memory.stored : 0.0;
        stage.busy += w;
        stage.kept_lifespan += w_stash * w;
        stage.recomputed_lifespan += w_stash * w;
        w_stash_time = memory.kept_after_b * w;
      }
      // A level's F keeps its part until the backward ends; a selective level's R rebuilds the
      // rest, resident from R's start (docs/bounds.md, "LB2 in detail").
      const std::span<const CheckpointLevelMemory> levels = levels_of(scenario, s);
      for (std::size_t k = 0; k < levels.size(); ++k) {
        const double recompute =
            static_cast<double>(costs.checkpoint_level_recompute[k].count());
        const double rebuilt = levels[k].selective ? memory.stored - levels[k].kept : 0.0;
        stage.levels.push_back(
            {recompute, levels[k].kept * static_cast<double>(profile.kept_lifespan[at(s)].count()) +
                            rebuilt * (recompute + bf) + w_stash_time});
      }
      if (cap && over_cap(least_resident(scenario, s), *cap))
        return std::nullopt;
      device_stages.push_back(stage);
    }
    if (!cap) {
      for (const MemoryTimeStage &stage : device_stages)
        values[at(g)] += m * stage.busy;
    } else if (device_stages.size() == 1 && device_stages.front().levels.empty()) {
      values[at(g)] = memory_time_integer(m, device_stages.front(), *cap);
    } else {
      values[at(g)] = memory_time_relaxed(m, device_stages, *cap);
    }
  }
  return values;
}

} // namespace

PathProfile path_profile(const Scenario &scenario, BackwardForm form) {
  const int stage_count = scenario.stage_count();
  PathProfile profile;
  profile.forward_prefix.assign(at(stage_count), Ticks{0});
  profile.backward_suffix.assign(at(stage_count), Ticks{0});
  profile.kept_lifespan.assign(at(stage_count), Ticks{0});
  for (int s = 0; s < stage_count; ++s) {
    if (scenario.is_pipe_entry(s))
      continue;
    const StageCosts &previous = scenario.stage_costs[at(s - 1)];
    const Ticks hop = crossing(scenario, s - 1);
    profile.forward_prefix[at(s)] = profile.forward_prefix[at(s - 1)] + previous.forward + hop;
    profile.backward_suffix[at(s)] =
        profile.backward_suffix[at(s - 1)] + full_backward(previous, form) + hop;
  }
  for (int s = stage_count - 1; s >= 0; --s) {
    const StageCosts &costs = scenario.stage_costs[at(s)];
    Ticks lifespan = costs.forward + full_backward(costs, form);
    if (!scenario.is_pipe_exit(s))
      lifespan += profile.kept_lifespan[at(s + 1)] + 2 * crossing(scenario, s);
    profile.kept_lifespan[at(s)] = lifespan;
  }
  return profile;
}

Ticks lb0_chain(const Scenario &scenario, BackwardForm form) {
  const PathProfile profile = path_profile(scenario, form);
  // The chain of a pipe is L of its entry stage: every F, every backward, two crossings each.
  Ticks best{0};
  for (int s = 0; s < scenario.stage_count(); s += scenario.stages_per_pipe())
    best = std::max(best, profile.kept_lifespan[at(s)]);
  return best;
}

Ticks lb1_device_path(const Scenario &scenario, BackwardForm form) {
  return device_bound(scenario, path_profile(scenario, form), WindowPart::head_and_tail, Ticks{0},
                      [&](int, const std::vector<int> &stages) {
                        return scenario.microbatches * busy_per_microbatch(scenario, stages, form);
                      });
}

bool lb2_is_integer_scan(const Scenario &scenario) {
  for (const std::vector<int> &stages : stages_by_device(scenario))
    if (stages.size() > 1 || (stages.size() == 1 && !levels_of(scenario, stages.front()).empty()))
      return false;
  return true;
}

namespace {

/// The largest device memory time of `variant` plus that device's window part, at least
/// `floor`; nullopt when the cap is below one activation (device_memory_time).
std::optional<Ticks> memory_time_bound(const Scenario &scenario, BackwardForm form,
                                       MemoryTimeVariant variant, WindowPart part, Ticks floor) {
  const PathProfile profile = path_profile(scenario, form);
  const std::optional<std::vector<double>> values =
      device_memory_time(scenario, form, profile, variant);
  if (!values)
    return std::nullopt;
  return device_bound(scenario, profile, part, floor, [&](int g, const std::vector<int> &) {
    return ceil_ticks((*values)[at(g)]);
  });
}

} // namespace

std::optional<Ticks> lb2_memory_time(const Scenario &scenario, BackwardForm form) {
  return memory_time_bound(scenario, form, MemoryTimeVariant::lb2, WindowPart::head_and_tail,
                           lb1_device_path(scenario, form));
}

Ticks lb3_split_backward(const Scenario &scenario) {
  const PathProfile profile = path_profile(scenario, BackwardForm::split);
  // Every device runs F, B and W of each of its stages (busy F + B + W: Bf of the full form).
  Ticks best = device_bound(
      scenario, profile, WindowPart::head, Ticks{0}, [&](int, const std::vector<int> &stages) {
        return scenario.microbatches * busy_per_microbatch(scenario, stages, BackwardForm::full);
      });
  for (int s = 0; s < scenario.stage_count(); s += scenario.stages_per_pipe())
    best =
        std::max(best, profile.kept_lifespan[at(s)] + scenario.stage_costs[at(s)].backward_weight);
  return best;
}

std::optional<Ticks> lb3_memory_time(const Scenario &scenario) {
  return memory_time_bound(scenario, BackwardForm::split, MemoryTimeVariant::with_w,
                           WindowPart::head, Ticks{0});
}

std::optional<Ticks> lb4_warmup(const Scenario &scenario, BackwardForm form) {
  const std::optional<double> cap = scenario.activations.cap;
  if (!cap)
    return std::nullopt;
  const PathProfile profile = path_profile(scenario, form);
  const std::vector<std::vector<int>> stages = stages_by_device(scenario);
  const double m = scenario.microbatches;
  Ticks best{0};
  for (int g = 0; g < scenario.devices; ++g) {
    if (stages[at(g)].empty())
      continue;
    const Window window = window_of(profile, stages[at(g)]);
    // T1: the earliest start of a backward of the device, PF(s) + L_s - Bf_s.
    Ticks first_backward{std::numeric_limits<std::int64_t>::max()};
    // Forwards resident at T1 as a fractional knapsack (value F_s, weight a_s, m of each; with
    // checkpoint levels also F_s at a level's part, or F_s - r_k at a selective level's part),
    // plus F_s - r_s for every forward that could run unkept and be recomputed later.
    struct Item {
      double forward, unit;
    };
    std::vector<Item> items;
    double saved_by_recomputing = 0;
    for (const int s : stages[at(g)]) {
      const StageCosts &costs = scenario.stage_costs[at(s)];
      if (over_cap(least_resident(scenario, s), *cap))
        return std::nullopt;
      first_backward =
          std::min(first_backward, profile.forward_prefix[at(s)] + profile.kept_lifespan[at(s)] -
                                       full_backward(costs, form));
      const auto forward = static_cast<double>(costs.forward.count());
      items.push_back({forward, scenario.activations.stages[at(s)].stored});
      const std::span<const CheckpointLevelMemory> levels = levels_of(scenario, s);
      for (std::size_t k = 0; k < levels.size(); ++k) {
        // A rotor level's R holds no more than its part, even when it runs before T1; a selective
        // R rebuilds the whole record, so before T1 it is the kept item's.
        const double value =
            levels[k].selective
                ? forward - static_cast<double>(costs.checkpoint_level_recompute[k].count())
                : forward;
        if (value > 0)
          items.push_back({value, levels[k].kept});
      }
      saved_by_recomputing +=
          m * std::max(0.0, forward - static_cast<double>(costs.recompute_forward.count()));
    }
    std::sort(items.begin(), items.end(), [](const Item &a, const Item &b) {
      return a.forward * b.unit > b.forward * a.unit; // most time per unit of memory first
    });
    double room = *cap, kept = 0;
    for (const Item &item : items) {
      const double count = item.unit > 0 ? std::min(m, room / item.unit) : m;
      kept += count * item.forward;
      room -= count * item.unit;
    }
    const double window_work = std::min(static_cast<double>((first_backward - window.head).count()),
                                        kept + saved_by_recomputing);
    // Every backward runs after T1: the device's whole F + B + W but what the window held.
    const double work =
        m * static_cast<double>(
                busy_per_microbatch(scenario, stages[at(g)], BackwardForm::full).count());
    // Full backward: the device ends with a backward, which leaves at least the shortest tail.
    const Ticks tail = form == BackwardForm::full ? window.tail : Ticks{0};
    best = std::max(best, first_backward + tail + ceil_ticks(work - window_work));
  }
  return best;
}

std::optional<Ticks> span_lower_bound(const Scenario &scenario, BackwardForm form) {
  return memory_time_bound(scenario, form, MemoryTimeVariant::with_w, WindowPart::none, Ticks{0});
}

double memory_time_integer(int microbatches, const MemoryTimeStage &stage, double cap) {
  PPSIM_ASSERT(cap > 0 && microbatches >= 0);
  const double m = microbatches;
  const auto value = [&](double kept) {
    const double busy = m * stage.busy + (m - kept) * stage.recompute;
    const double memory =
        stage.unit * (kept * stage.kept_lifespan + (m - kept) * stage.recomputed_lifespan);
    return std::max(busy, memory / cap);
  };
  // busy(x) decreases and M(x)/K increases with x, so the maximum is quasi-convex and its
  // integer minimum is at an end of [0, m] or next to the real crossing x*.
  const double busy_all_recomputed = m * (stage.busy + stage.recompute);
  const double memory_all_recomputed = stage.unit * m * stage.recomputed_lifespan;
  const double memory_slope = stage.unit * (stage.kept_lifespan - stage.recomputed_lifespan);
  const double denominator = cap * stage.recompute + memory_slope;
  double best = std::min(value(0), value(m));
  if (denominator > 0) {
    const double crossing = (cap * busy_all_recomputed - memory_all_recomputed) / denominator;
    const double low = std::clamp(std::floor(crossing), 0.0, m);
    const double high = std::clamp(std::ceil(crossing), 0.0, m);
    best = std::min({best, value(low), value(high)});
  }
  return best;
}

double memory_time_relaxed(int microbatches, std::span<const MemoryTimeStage> stages, double cap) {
  PPSIM_ASSERT(cap > 0 && microbatches >= 0);
  const double m = microbatches;
  // Every microbatch of a stage starts at the option of least memory-time; moving it along the
  // stage's lower convex hull of (extra busy, memory-time) trades busy time saved for memory-time
  // added, at rising cost (docs/bounds.md, "LB2 in detail"). Keep and whole-stage recomputation
  // are two of the options, checkpoint levels the others.
  double busy = 0, memory = 0;
  struct Trade {
    double busy_saved, memory_added;
  };
  std::vector<Trade> trades;
  struct Option {
    double busy, memory;
  };
  std::vector<Option> options, hull;
  for (const MemoryTimeStage &stage : stages) {
    options.assign({{0, stage.unit * stage.kept_lifespan},
                    {stage.recompute, stage.unit * stage.recomputed_lifespan}});
    for (const MemoryTimeLevel &level : stage.levels)
      options.push_back({level.recompute, level.memory_time});
    std::sort(options.begin(), options.end(), [](const Option &a, const Option &b) {
      return a.memory != b.memory ? a.memory < b.memory : a.busy < b.busy;
    });
    hull.clear();
    for (const Option &option : options) {
      if (!hull.empty() && option.busy >= hull.back().busy)
        continue; // more memory-time for no less busy time
      // Drop the last vertex while it lies on or above the segment to the new option.
      while (hull.size() >= 2) {
        const Option &a = hull[hull.size() - 2], &b = hull.back();
        if ((b.memory - a.memory) * (b.busy - option.busy) <
            (option.memory - b.memory) * (a.busy - b.busy))
          break;
        hull.pop_back();
      }
      hull.push_back(option);
    }
    busy += m * (stage.busy + hull.front().busy);
    memory += m * hull.front().memory;
    for (std::size_t k = 1; k < hull.size(); ++k)
      trades.push_back({hull[k - 1].busy - hull[k].busy, hull[k].memory - hull[k - 1].memory});
  }
  if (busy <= memory / cap)
    return memory / cap;
  // Fractional knapsack: cheapest memory per unit of busy saved first; a stage's hull segments
  // come in that order already (stable sort).
  std::stable_sort(trades.begin(), trades.end(), [](const Trade &a, const Trade &b) {
    return a.memory_added * b.busy_saved < b.memory_added * a.busy_saved;
  });
  for (const Trade &trade : trades) {
    const double busy_after = busy - m * trade.busy_saved;
    const double memory_after = memory + m * trade.memory_added;
    if (busy_after > memory_after / cap) {
      busy = busy_after;
      memory = memory_after;
      continue;
    }
    const double kept = (cap * busy - memory) / (cap * trade.busy_saved + trade.memory_added);
    return busy - kept * trade.busy_saved;
  }
  return std::max(busy, memory / cap);
}

} // namespace ppsim
