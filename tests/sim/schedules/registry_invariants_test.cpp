// One invariant suite for every registered schedule (CONVENTIONS example 14): on a seeded grid
// of (p, m, v, costs, latency) a generator either rejects the parameters with ppsim::Error or
// returns a schedule that validates, runs every op exactly once, respects every dependency
// (start >= producer end + transfer), never overlaps two ops on a device, is deterministic, and
// never beats the LB1 path bound of docs/bounds.md, "The bounds" (LB3 of docs/bounds.md, "The
// bounds" where W ops exist), and re-imports unchanged from its PyTorch CSV export
// (docs/scenario.md, "PyTorch CSV schedules").
#include "base/error.h"
#include "base/index.h"
#include "sim/io/torch_csv.h"
#include "sim/memory.h"
#include "sim/metrics.h"
#include "sim/op_locator.h"
#include "sim/scenario_builder.h"
#include "sim/schedules/registry.h"
#include "sim/validate.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace {

using ppsim::Op;
using ppsim::OpKind;
using ppsim::OpRef;
using ppsim::Scenario;
using ppsim::Schedule;
using ppsim::Ticks;

struct Case {
  int p, m, v;
  ppsim::Rational f, b, w, c;
  unsigned per_stage_seed = 0; ///< nonzero: draw F, B, W per stage from this seed instead
};

const ppsim::StageCosts &costs_of(const Scenario &scenario, int stage) {
  return scenario.stage_costs[ppsim::at(stage)];
}

int device_of(const Scenario &scenario, int stage) {
  return scenario.stage_device[ppsim::at(stage)];
}

/// Transfer charged on the edge between `from` and `to` (adjacent stages of one pipe).
Ticks edge_delay(const Scenario &scenario, int from, int to) {
  if (device_of(scenario, from) == device_of(scenario, to))
    return Ticks{0};
  return scenario.boundary_transfer[ppsim::at(std::min(from, to))];
}

/// The cross-op producers of `op` per docs/model.md, "Dependencies" (an independent
/// restatement of the dependency rules, so the engine is checked rather than trusted).
std::vector<OpRef> producers(const Scenario &scenario, const ppsim::OpLocator &locator, OpRef op) {
  const auto backward_of = [&](int stage) {
    const OpRef full{OpKind::backward_full, stage, op.microbatch};
    return locator.find(full) != ppsim::OpLocator::kAbsent
               ? full
               : OpRef{OpKind::backward_input, stage, op.microbatch};
  };
  switch (op.kind) {
  case OpKind::forward:
    if (scenario.is_pipe_entry(op.stage))
      return {};
    return {OpRef{OpKind::forward, op.stage - 1, op.microbatch}};
  case OpKind::backward_input:
  case OpKind::backward_full:
    if (scenario.is_pipe_exit(op.stage))
      return {OpRef{OpKind::forward, op.stage, op.microbatch}};
    return {backward_of(op.stage + 1)};
  case OpKind::backward_weight:
    return {OpRef{OpKind::backward_input, op.stage, op.microbatch}};
  case OpKind::recompute_forward:
    return {OpRef{OpKind::forward, op.stage, op.microbatch}};
  case OpKind::recompute_weight_inputs:
  case OpKind::recompute_full_backward:
    return {OpRef{OpKind::backward_input, op.stage, op.microbatch}};
  case OpKind::overlapped:
    break;
  }
  return {};
}

/// LB1 of docs/bounds.md, "The bounds" (with LB3 for devices that run standalone W
/// ops), generalised to any placement by taking the smallest head PF and tail PB over the device's
/// stages. Busy time is the device's actual op time (OV at its scenario duration). The tail uses,
/// per stage, the cheaper backward form the schedule really runs.
// Local helper until bounds/ provides LB1; replace by the library call then.
Ticks path_bound(const Scenario &scenario, const Schedule &schedule,
                 const ppsim::OpLocator &locator) {
  const int per_pipe = scenario.stages_per_pipe();
  std::vector<Ticks> head(ppsim::at(scenario.stage_count()));
  std::vector<Ticks> tail(ppsim::at(scenario.stage_count()));
  for (int s = 0; s < scenario.stage_count(); ++s) {
    if (s % per_pipe == 0)
      continue;
    const auto u = ppsim::at(s);
    const ppsim::StageCosts &before = costs_of(scenario, s - 1);
    bool any_split = false;
    for (int j = 0; j < scenario.microbatches && !any_split; ++j) {
      any_split = locator.contains(OpKind::backward_input, s - 1, j);
    }
    const Ticks backward =
        any_split ? before.backward_input : before.backward_input + before.backward_weight;
    head[u] = head[u - 1] + before.forward + edge_delay(scenario, s - 1, s);
    tail[u] = tail[u - 1] + backward + edge_delay(scenario, s - 1, s);
  }
  Ticks best{0};
  for (int g = 0; g < scenario.devices; ++g) {
    Ticks busy{0};
    bool has_weight_op = false;
    for (const Op &op : schedule.device_ops[ppsim::at(g)]) {
      busy += ppsim::op_duration(scenario, op);
      has_weight_op = has_weight_op || op.kind() == OpKind::backward_weight;
    }
    Ticks min_head{-1};
    Ticks min_tail{-1};
    for (int s = 0; s < scenario.stage_count(); ++s) {
      if (device_of(scenario, s) != g)
        continue;
      const auto u = ppsim::at(s);
      if (min_head < Ticks{0} || head[u] < min_head)
        min_head = head[u];
      if (min_tail < Ticks{0} || tail[u] < min_tail)
        min_tail = tail[u];
    }
    if (min_head < Ticks{0})
      continue; // device without stages
    best = std::max(best, min_head + busy + (has_weight_op ? Ticks{0} : min_tail));
  }
  return best;
}

void check_invariants(const Scenario &scenario, const Schedule &schedule,
                      const ppsim::Simulation &simulation) {
  const ppsim::OpLocator locator(schedule, scenario.stage_count(), scenario.microbatches);
  const ppsim::Timing &result = simulation.timing;
  // Every sub-op exactly once; the forward and backward counts of docs/model.md, "Validation and
  // exit codes".
  std::set<std::tuple<int, int, int>> seen;
  std::size_t forwards = 0;
  std::size_t backward_units = 0; // BW counts 2, B and W count 1 each
  for (const auto &ops : schedule.device_ops) {
    for (const Op &op : ops) {
      for (int part = 0; part < op.sub_op_count(); ++part) {
        const OpRef ref = op.sub_op(part);
        CHECK(seen.insert({static_cast<int>(ref.kind), ref.stage, ref.microbatch}).second);
        forwards += ref.kind == OpKind::forward;
        backward_units +=
            ref.kind == OpKind::backward_full                                             ? 2
            : (ref.kind == OpKind::backward_input || ref.kind == OpKind::backward_weight) ? 1
                                                                                          : 0;
      }
    }
  }
  const auto expected = ppsim::at(scenario.stage_count() * scenario.microbatches);
  CHECK(forwards == expected);
  CHECK(backward_units == 2 * expected);

  for (int g = 0; g < schedule.device_count(); ++g) {
    const auto &ops = schedule.device_ops[ppsim::at(g)];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto entry = ppsim::at(locator.entry_offset(g)) + i;
      CHECK(result.end[entry] == result.start[entry] + ppsim::op_duration(scenario, ops[i]));
      if (i > 0)
        CHECK(result.start[entry] >= result.end[entry - 1]); // one op at a time
      for (int part = 0; part < ops[i].sub_op_count(); ++part) {
        const OpRef ref = ops[i].sub_op(part);
        for (const OpRef &producer : producers(scenario, locator, ref)) {
          const std::int32_t from = locator.find(producer);
          CHECK(from != ppsim::OpLocator::kAbsent);
          if (from == ppsim::OpLocator::kAbsent)
            continue;
          const Ticks ready =
              result.end[ppsim::at(from)] + (producer.stage == ref.stage
                                                 ? Ticks{0}
                                                 : edge_delay(scenario, producer.stage, ref.stage));
          CHECK(result.start[entry] >= ready);
        }
      }
    }
  }
  CHECK(simulation.metrics.makespan >= path_bound(scenario, schedule, locator));
}

bool has_recomputation(const Schedule &schedule) {
  for (const auto &ops : schedule.device_ops) {
    for (const Op &op : ops) {
      if (op.kind() == OpKind::recompute_forward || op.kind() == OpKind::recompute_weight_inputs ||
          op.kind() == OpKind::recompute_full_backward) {
        return true;
      }
    }
  }
  return false;
}

ppsim::Rational random_cost(std::mt19937 &rng, bool allow_zero) {
  std::uniform_int_distribution<int> numerator(allow_zero ? 0 : 1, 6);
  std::uniform_int_distribution<int> denominator(1, 3);
  return {numerator(rng), denominator(rng)};
}

std::vector<Case> grid() {
  std::vector<Case> cases;
  std::mt19937 rng(20261122);
  for (int p = 1; p <= 5; ++p) {
    for (const int v : {0, 1, 2, 3, 4}) {
      for (const int m : {1, 2, p, 2 * p, 2 * p + 1, 3 * p + 2}) {
        cases.push_back({p, m, v, {1, 1}, {1, 1}, {1, 1}, {0, 1}});
        cases.push_back({p, m, v, random_cost(rng, false), random_cost(rng, false),
                         random_cost(rng, true), random_cost(rng, true)});
        cases.push_back(
            {p, m, v, {}, {}, {}, random_cost(rng, true), static_cast<unsigned>(rng())});
      }
    }
  }
  return cases;
}

} // namespace

TEST_CASE("every registered schedule either rejects a case with Error or runs it correctly") {
  const std::vector<Case> cases = grid();
  for (const ppsim::ScheduleInfo &info : ppsim::schedule_registry()) {
    int accepted = 0;
    for (const Case &c : cases) {
      ppsim::ScenarioInput input;
      input.devices = c.p;
      input.microbatches = c.m;
      input.chunks = c.v;
      input.forward = {c.f};
      input.backward_input = {c.b};
      input.backward_weight = {c.w};
      input.latency = c.c;
      // An OV op at least as long as either sub-op keeps the path bound valid (its F and
      // backward cannot end earlier than they would alone).
      input.overlap_fb = c.f + c.b + c.w;
      if (c.per_stage_seed != 0) {
        const int chunks = c.v > 0 ? c.v : info.default_chunks;
        const int pipes = info.placement == ppsim::PlacementKind::dual_pipe ? 2 : 1;
        std::mt19937 rng(c.per_stage_seed);
        input.forward.clear();
        input.backward_input.clear();
        input.backward_weight.clear();
        for (int s = 0; s < c.p * chunks * pipes; ++s) {
          input.forward.push_back(random_cost(rng, false));
          input.backward_input.push_back(random_cost(rng, false));
          input.backward_weight.push_back(random_cost(rng, true));
        }
        input.overlap_fb = ppsim::Rational{12, 1}; // >= every F and every B + W drawn
      }
      CAPTURE(info.name);
      CAPTURE(c.p);
      CAPTURE(c.m);
      CAPTURE(c.v);
      const std::string costs =
          c.per_stage_seed != 0
              ? fmt::format("per-stage F, B, W from seed {}, c={}/{}", c.per_stage_seed,
                            c.c.numerator, c.c.denominator)
              : fmt::format("F={}/{} B={}/{} W={}/{} c={}/{}", c.f.numerator, c.f.denominator,
                            c.b.numerator, c.b.denominator, c.w.numerator, c.w.denominator,
                            c.c.numerator, c.c.denominator);
      CAPTURE(costs);
      Scenario scenario;
      try {
        scenario = ppsim::build_scenario(input, info);
      } catch (const ppsim::Error &) {
        continue; // a placement the builder refuses (DualPipe's odd m, say)
      }
      // The registry entry answers without generating: a generator throws exactly the error its
      // precondition names, and generates every case the precondition accepts.
      const std::optional<ppsim::Error> refusal = info.refusal(scenario, {});
      Schedule schedule;
      try {
        schedule = ppsim::generate_schedule(info, scenario, {});
      } catch (const ppsim::CapUnreachable &) {
        continue; // a cap-driven search (zb-v-greedy under its default cap p) found nothing
      } catch (const ppsim::Error &error) {
        REQUIRE_MESSAGE(refusal, std::string(error.what()));
        CHECK(std::string(error.what()) == refusal->what());
        continue;
      } catch (const std::exception &internal) {
        FAIL_CHECK(std::string(internal.what())); // not a user error: a generator bug
        continue;
      }
      if (refusal)
        FAIL_CHECK("generated although its precondition refuses: " << refusal->what());
      ++accepted;
      ppsim::Simulation first;
      try { // an accepted case must validate and run (no deadlock)
        ppsim::validate_schedule(scenario, schedule);
        first = ppsim::simulate(scenario, schedule);
      } catch (const ppsim::Error &error) {
        FAIL_CHECK(std::string(error.what()));
        continue; // keep checking the other cases and schedules
      }
      check_invariants(scenario, schedule, first);
      const Schedule again = ppsim::generate_schedule(info, scenario, {});
      CHECK(again.device_ops == schedule.device_ops);
      const ppsim::Simulation second = ppsim::simulate(scenario, again);
      CHECK(second.timing.start == first.timing.start);
      CHECK(second.timing.end == first.timing.end);
      // PyTorch has no action for R, RW, RBW nor a second pipe; the exporter refuses those.
      if (!has_recomputation(schedule) && scenario.pipes == 1) {
        const ppsim::TorchCsvExport csv = ppsim::write_torch_csv(scenario, schedule);
        const ppsim::ImportedSchedule imported = ppsim::parse_torch_csv(csv.text, "export");
        CHECK(imported.schedule.device_ops == schedule.device_ops);
      }
    }
    CAPTURE(info.name);
    CHECK(accepted > 0); // the grid exercises every schedule
  }
}
