// Megatron interleaved 1F1B and looped BFS on the round-robin placement (docs/schedules.md,
// "interleaved-1f1b and looped-bfs"). Sources: NVIDIA/Megatron-LM
// megatron/core/pipeline_parallel/schedules.py (get_pp_rank_microbatches, get_schedule_table);
// PyTorch ScheduleLoopedBFS.
#include "base/assert.h"
#include "base/error.h"
#include "base/index.h"
#include "sim/schedules/families.h"
#include "sim/schedules/megatron_table.h"
#include "sim/schedules/op_lists.h"

#include <algorithm>
#include <fmt/format.h>

namespace ppsim::schedules {

std::optional<Error> megatron_group_size_refusal(int devices, int microbatches, int group_size) {
  if (group_size > microbatches) {
    return Error(fmt::format("schedule 'interleaved-1f1b': group size g = {} is larger than the "
                             "number of microbatches m = {}",
                             group_size, microbatches));
  }
  if (group_size < devices && group_size != microbatches) {
    return Error(fmt::format("schedule 'interleaved-1f1b': group size g = {} is smaller than the "
                             "number of devices p = {}",
                             group_size, devices));
  }
  const int remainder = microbatches % group_size;
  if (remainder > 0 && remainder < devices) {
    return Error(fmt::format("schedule 'interleaved-1f1b': m mod g = {} (m = {}, g = {}) is "
                             "between 1 and p - 1 = {}, which leaves dependency bubbles",
                             remainder, microbatches, group_size, devices - 1));
  }
  return std::nullopt;
}

namespace {

// PyTorch's ScheduleInterleaved1F1B: max(1, m div p) rounds of m / rounds microbatches (p when
// p divides m, all m when m < p), and m must split evenly into the rounds.
int pytorch_rounds(int devices, int microbatches) { return std::max(1, microbatches / devices); }

// The group size a run uses: --group-size, or PyTorch's when none is given.
int group_size(const Scenario &scenario, const GeneratorOptions &options) {
  return options.group_size > 0 ? options.group_size
                                : pytorch_group_size(scenario.devices, scenario.microbatches);
}

// What both interleaved generators require of the group size.
std::optional<Error> group_size_refusal(const Scenario &scenario, const GeneratorOptions &options) {
  if (options.group_size == 0) {
    if (auto refusal = pytorch_group_size_refusal(scenario.devices, scenario.microbatches))
      return refusal;
  }
  return megatron_group_size_refusal(scenario.devices, scenario.microbatches,
                                     group_size(scenario, options));
}

} // namespace

std::optional<Error> pytorch_group_size_refusal(int devices, int microbatches) {
  const int rounds = pytorch_rounds(devices, microbatches);
  if (microbatches % rounds == 0)
    return std::nullopt;
  return Error(fmt::format("schedule 'interleaved-1f1b': m = {} does not split into {} rounds of "
                           "equal size (PyTorch's rule for p = {}); give --group-size",
                           microbatches, rounds, devices));
}

int pytorch_group_size(int devices, int microbatches) {
  PPSIM_ASSERT(!pytorch_group_size_refusal(devices, microbatches));
  return microbatches / pytorch_rounds(devices, microbatches);
}

std::vector<MicrobatchChunk> megatron_schedule_table(int microbatches, int chunks, int group_size) {
  std::vector<MicrobatchChunk> table;
  table.reserve(at(microbatches) * at(chunks));
  for (int lo = 0; lo < microbatches; lo += group_size) {
    const int hi = lo + group_size >= microbatches ? microbatches : lo + group_size;
    for (int chunk = 0; chunk < chunks; ++chunk) {
      for (int mb = lo; mb < hi; ++mb)
        table.push_back({mb, chunk});
    }
  }
  return table;
}

std::optional<Error> interleaved_1f1b_precondition(const Scenario &scenario,
                                                   const GeneratorOptions &options) {
  if (scenario.chunks < 2) {
    return Error(fmt::format("schedule 'interleaved-1f1b' needs v >= 2 chunks per device, got {} "
                             "(use '1f1b' for one chunk)",
                             scenario.chunks));
  }
  return group_size_refusal(scenario, options);
}

Schedule interleaved_1f1b(const Scenario &scenario, const GeneratorOptions &options) {
  enforce(interleaved_1f1b_precondition(scenario, options));
  const int p = scenario.devices;
  const int m = scenario.microbatches;
  const int v = scenario.chunks;
  const int g = group_size(scenario, options);
  const std::vector<MicrobatchChunk> table = megatron_schedule_table(m, v, g);
  const int total = m * v;
  Schedule schedule = empty_schedule(scenario);
  for (int r = 0; r < p; ++r) {
    auto &ops = schedule.device_ops[at(r)];
    ops.reserve(2 * at(total));
    const auto forward = [&](int k) {
      const MicrobatchChunk &entry = table[at(k)];
      ops.push_back(Op::make(OpKind::forward, entry.chunk * p + r, entry.microbatch));
    };
    const auto backward = [&](int k) {
      const MicrobatchChunk &entry = table[at(k)];
      push_backward(ops, (v - 1 - entry.chunk) * p + r, entry.microbatch, false);
    };
    const int warmup = std::min(2 * (p - 1 - r) + (v - 1) * g, total);
    const int steady = total - warmup;
    for (int k = 0; k < warmup; ++k)
      forward(k);
    for (int k = 0; k < steady; ++k) {
      forward(k + warmup);
      backward(k);
    }
    for (int k = steady; k < total; ++k)
      backward(k);
  }
  return schedule;
}

// PyTorch's ScheduleInterleavedZeroBubble (the ZB1P rule of arXiv 2401.10241 on the
// round-robin placement): interleaved 1F1B's round order with a warm-up of (v-1)g + (p-1-r)
// forwards, B in place of BW, and from device r's (r+1)-th steady step on one W per step, the
// oldest pending; the rest of the W's at the end. With v = 1 it is zb-h1 op for op.
std::optional<Error> interleaved_zb_precondition(const Scenario &scenario,
                                                 const GeneratorOptions &options) {
  if (auto refusal = group_size_refusal(scenario, options))
    return refusal;
  const int m = scenario.microbatches;
  const int g = group_size(scenario, options);
  if (m % g != 0) { // PyTorch's rounds are equal; a shorter last group has no step formula
    return Error(fmt::format(
        "schedule 'interleaved-zb' needs the group size to divide m, got g = {}, m = {}", g, m));
  }
  return std::nullopt;
}

Schedule interleaved_zb(const Scenario &scenario, const GeneratorOptions &options) {
  enforce(interleaved_zb_precondition(scenario, options));
  const int p = scenario.devices;
  const int m = scenario.microbatches;
  const int v = scenario.chunks;
  const int g = group_size(scenario, options);
  const int total = m * v;
  Schedule schedule = empty_schedule(scenario);
  for (int r = 0; r < p; ++r) {
    auto &ops = schedule.device_ops[at(r)];
    ops.reserve(3 * at(total));
    const int warmup = std::min((v - 1) * g + (p - 1 - r), total);
    std::vector<int> next_forward(at(v), 0), next_backward(at(v), 0), next_weight(at(v), 0);
    std::vector<int> backward_chunks; // chunk of each B issued, in order, for the W's
    std::size_t weights = 0;
    const auto forward = [&](int step) {
      const int chunk = (step / g) % v;
      ops.push_back(Op::make(OpKind::forward, chunk * p + r, next_forward[at(chunk)]++));
    };
    const auto backward = [&](int step) {
      const int chunk = v - 1 - ((step - warmup) / g) % v;
      ops.push_back(Op::make(OpKind::backward_input, chunk * p + r, next_backward[at(chunk)]++));
      backward_chunks.push_back(chunk);
    };
    const auto weight = [&]() {
      const int chunk = backward_chunks[weights++];
      ops.push_back(Op::make(OpKind::backward_weight, chunk * p + r, next_weight[at(chunk)]++));
    };
    for (int step = 0; step < warmup; ++step)
      forward(step);
    for (int step = warmup; step < total + warmup; ++step) {
      if (step < total)
        forward(step);
      backward(step);
      if (step - warmup >= r)
        weight();
    }
    while (weights < backward_chunks.size())
      weight();
  }
  return schedule;
}

Schedule looped_bfs(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  const int p = scenario.devices;
  const int m = scenario.microbatches;
  const int v = scenario.chunks;
  Schedule schedule = empty_schedule(scenario);
  for (int r = 0; r < p; ++r) {
    auto &ops = schedule.device_ops[at(r)];
    ops.reserve(2 * at(m * v));
    for (int chunk = 0; chunk < v; ++chunk) {
      for (int j = 0; j < m; ++j)
        ops.push_back(Op::make(OpKind::forward, chunk * p + r, j));
    }
    // Backwards run chunk by chunk from the last, microbatches in decreasing order (PyTorch).
    for (int chunk = v - 1; chunk >= 0; --chunk) {
      for (int j = m - 1; j >= 0; --j)
        push_backward(ops, chunk * p + r, j, false);
    }
  }
  return schedule;
}

// `(vm+p-1)(F+B+W)` with groups of g = p and m mod p = 0 (Megatron, Narayanan et al. 2021).
std::optional<Ticks> interleaved_1f1b_closed_form(const UniformCosts &u) {
  const std::int64_t g = u.group_size == 0 ? u.p : u.group_size;
  if (u.c != Ticks{0} || g != u.p || u.m % u.p != 0)
    return std::nullopt;
  return (u.v * u.m + u.p - 1) * u.full();
}

} // namespace ppsim::schedules
