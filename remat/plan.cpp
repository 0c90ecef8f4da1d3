#include "remat/plan.h"
#include "base/index.h"
#include "base/text_file.h"

#include "base/assert.h"
#include "base/error.h"
#include "sim/memory.h"
#include "sim/op_locator.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace ppsim {

RematPlan::RematPlan(int stages, int microbatches)
    : stages_(stages), microbatches_(microbatches),
      decisions_(ppsim::at(stages) * ppsim::at(microbatches)) {}

const RematDecision &RematPlan::at(int stage, int microbatch) const {
  PPSIM_ASSERT(stage >= 0 && stage < stages_ && microbatch >= 0 && microbatch < microbatches_);
  return decisions_[ppsim::at(stage * microbatches_ + microbatch)];
}

RematDecision &RematPlan::at(int stage, int microbatch) {
  PPSIM_ASSERT(stage >= 0 && stage < stages_ && microbatch >= 0 && microbatch < microbatches_);
  return decisions_[ppsim::at(stage * microbatches_ + microbatch)];
}

int RematPlan::forward_count() const {
  int count = 0;
  for (const RematDecision &d : decisions_)
    count += d.forward == ForwardRemat::full ? 1 : 0;
  return count;
}

int RematPlan::checkpoint_level_count() const {
  int count = 0;
  for (const RematDecision &d : decisions_)
    count += d.forward == ForwardRemat::full && d.level > 0 ? 1 : 0;
  return count;
}

int RematPlan::weight_input_count() const {
  int count = 0;
  for (const RematDecision &d : decisions_)
    count += d.backward == BackwardRemat::activations;
  return count;
}

int RematPlan::full_backward_count() const {
  int count = 0;
  for (const RematDecision &d : decisions_)
    count += d.backward == BackwardRemat::full;
  return count;
}

int RematPlan::recompute_count() const {
  return forward_count() + weight_input_count() + full_backward_count();
}

RematPlan empty_plan(const Scenario &scenario) {
  return RematPlan(scenario.stage_count(), scenario.microbatches);
}

namespace {

/// Appends to `ops` what `decision` puts right before the op holding `ref`: R before B/BW, RW or
/// RBW before W. Returns how many ops it appended; throws Error for a backward option on a BW.
int append_recomputation(std::vector<Op> &ops, const OpRef &ref, const RematDecision &decision,
                         const std::string &schedule_name) {
  switch (ref.kind) {
  case OpKind::backward_input:
  case OpKind::backward_full: {
    if (ref.kind == OpKind::backward_full && decision.backward != BackwardRemat::none) {
      throw Error(fmt::format("backward remat of stage {} microbatch {} needs a split "
                              "backward (B and W), but schedule '{}' runs {}",
                              ref.stage, ref.microbatch, schedule_name, describe(ref)));
    }
    if (decision.forward != ForwardRemat::full)
      return 0;
    ops.push_back(
        Op::make(OpKind::recompute_forward, ref.stage, ref.microbatch, decision.level));
    return 1;
  }
  case OpKind::backward_weight:
    if (decision.backward == BackwardRemat::none)
      return 0;
    ops.push_back(Op::make(decision.backward == BackwardRemat::activations
                               ? OpKind::recompute_weight_inputs
                               : OpKind::recompute_full_backward,
                           ref.stage, ref.microbatch));
    return 1;
  default:
    return 0;
  }
}

} // namespace

Schedule apply_plan(const Schedule &base, const RematPlan &plan) {
  Schedule result;
  result.name = base.name;
  result.device_ops.resize(base.device_ops.size());
  // Each decision must land on exactly one op; count what was placed to catch the rest.
  int placed = 0;
  const auto decision = [&](const OpRef &ref) -> const RematDecision & {
    if (ref.stage < 0 || ref.stage >= plan.stages() || ref.microbatch < 0 ||
        ref.microbatch >= plan.microbatches()) {
      throw Error(fmt::format("the remat plan covers {} stages and {} microbatches, but the "
                              "schedule contains {}",
                              plan.stages(), plan.microbatches(), describe(ref)));
    }
    return plan.at(ref.stage, ref.microbatch);
  };
  for (std::size_t g = 0; g < base.device_ops.size(); ++g) {
    std::vector<Op> &ops = result.device_ops[g];
    ops.reserve(base.device_ops[g].size() * 2);
    for (const Op &op : base.device_ops[g]) {
      for (int part = 0; part < op.sub_op_count(); ++part) {
        const OpRef ref = op.sub_op(part);
        if (is_recompute(ref.kind)) {
          throw Error(fmt::format("schedule '{}' already contains {}; remat applies to a base "
                                  "schedule without recomputation",
                                  base.name, describe(ref)));
        }
        placed += append_recomputation(ops, ref, decision(ref), base.name);
      }
      ops.push_back(op);
    }
  }
  if (placed != plan.recompute_count()) {
    throw Error(fmt::format("the remat plan asks for {} recomputations but schedule '{}' has "
                            "backward ops for only {} of them",
                            plan.recompute_count(), base.name, placed));
  }
  return result;
}

Schedule with_decision(const Schedule &schedule, int stage, int microbatch,
                       const RematDecision &decision) {
  Schedule result;
  result.name = schedule.name;
  result.device_ops.resize(schedule.device_ops.size());
  const auto own = [&](const OpRef &ref) {
    return ref.stage == stage && ref.microbatch == microbatch;
  };
  for (std::size_t g = 0; g < schedule.device_ops.size(); ++g) {
    std::vector<Op> &ops = result.device_ops[g];
    ops.reserve(schedule.device_ops[g].size() + 2);
    for (const Op &op : schedule.device_ops[g]) {
      if (is_recompute(op.first.kind) && own(op.first))
        continue; // the old decision's op
      for (int part = 0; part < op.sub_op_count(); ++part)
        if (own(op.sub_op(part)))
          append_recomputation(ops, op.sub_op(part), decision, schedule.name);
      ops.push_back(op);
    }
  }
  return result;
}

Schedule without_recomputation(const Schedule &schedule) {
  Schedule base = schedule;
  for (std::vector<Op> &ops : base.device_ops)
    std::erase_if(ops, [](const Op &op) { return is_recompute(op.kind()); });
  return base;
}

RematPlan plan_of(const Schedule &schedule, int stages, int microbatches) {
  RematPlan plan(stages, microbatches);
  for (const auto &ops : schedule.device_ops) {
    for (const Op &op : ops) {
      const OpRef &ref = op.first;
      if (!is_recompute(ref.kind))
        continue;
      take_recomputation(plan.at(ref.stage, ref.microbatch), ref);
    }
  }
  return plan;
}

void take_recomputation(RematDecision &decision, const OpRef &ref) {
  if (ref.kind == OpKind::recompute_forward) {
    decision.forward = ForwardRemat::full;
    decision.level = ref.level;
  }
  if (ref.kind == OpKind::recompute_weight_inputs)
    decision.backward = BackwardRemat::activations;
  if (ref.kind == OpKind::recompute_full_backward)
    decision.backward = BackwardRemat::full;
}

RematPlan parse_plan_csv(std::string_view text, const std::string &source, int stages,
                         int microbatches, const std::vector<int> &selective_levels) {
  RematPlan plan(stages, microbatches);
  // The line of each (stage, microbatch)'s row: a second row is refused, not silently the winner.
  std::vector<int> row_line(static_cast<std::size_t>(stages) *
                            static_cast<std::size_t>(microbatches));
  int line_number = 0;
  bool header_seen = false;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    const std::string line(trim(text.substr(begin, end - begin)));
    begin = end + 1;
    ++line_number;
    if (line.empty() || line.front() == '#')
      continue;
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');)
      cells.emplace_back(trim(cell));
    const auto fail = [&](const std::string &field, const std::string &sentence) {
      throw Error(source, line_number, field, sentence);
    };
    if (!header_seen) {
      if (cells != std::vector<std::string>{"stage", "microbatch", "fwd", "bwd"}) {
        fail("", "expected the header 'stage,microbatch,fwd,bwd'");
      }
      header_seen = true;
      continue;
    }
    if (cells.size() != 4)
      fail("", fmt::format("expected 4 columns, got {}", cells.size()));
    const auto index = [&](const std::string &cell, const char *field, int limit) {
      int value = -1;
      try {
        std::size_t used = 0;
        value = std::stoi(cell, &used);
        if (used != cell.size())
          value = -1;
      } catch (const std::exception &) {
        value = -1;
      }
      if (value < 0 || value >= limit) {
        fail(field, fmt::format("expected an integer in 0..{}, got \"{}\"",
                                limit - 1, cut_for_message(cell)));
      }
      return value;
    };
    const int stage = index(cells[0], "stage", stages);
    const int microbatch = index(cells[1], "microbatch", microbatches);
    int &first_line = row_line[static_cast<std::size_t>(stage) * microbatches + microbatch];
    if (first_line != 0)
      fail("", fmt::format("a second row for stage {}, microbatch {} (the first is on line {})",
                           stage, microbatch, first_line));
    first_line = line_number;
    RematDecision &d = plan.at(stage, microbatch);
    constexpr std::string_view kLevel = "level:";
    if (cells[2] == "none") {
      d.forward = ForwardRemat::none;
    } else if (cells[2] == "full") {
      d.forward = ForwardRemat::full;
    } else if (cells[2] == "selective") {
      const int level =
          at(stage) < selective_levels.size() ? selective_levels[at(stage)] : 0;
      if (level == 0)
        fail("fwd", fmt::format("stage {} has no selective recomputation: the cost file measures "
                                "none (recompute_selective_ms)",
                                stage));
      d.forward = ForwardRemat::full;
      d.level = static_cast<std::uint8_t>(level);
    } else if (cells[2].starts_with(kLevel)) {
      d.forward = ForwardRemat::full;
      d.level = static_cast<std::uint8_t>(index(cells[2].substr(kLevel.size()), "fwd", 256));
      if (d.level == 0)
        fail("fwd", "checkpoint levels are numbered from 1 (level:0 is written full)");
    } else {
      fail("fwd",
           fmt::format("expected none, full, selective or level:K, got \"{}\"",
                       cut_for_message(cells[2])));
    }
    if (cells[3] == "none") {
      d.backward = BackwardRemat::none;
    } else if (cells[3] == "activations") {
      d.backward = BackwardRemat::activations;
    } else if (cells[3] == "full") {
      d.backward = BackwardRemat::full;
    } else {
      fail("bwd", fmt::format("expected none, activations or full, got \"{}\"",
                              cut_for_message(cells[3])));
    }
  }
  if (!header_seen)
    throw Error(source, 1, "", "expected the header 'stage,microbatch,fwd,bwd'");
  return plan;
}

std::string format_plan_csv(const RematPlan &plan, const std::vector<int> &selective_levels) {
  std::string text = "stage,microbatch,fwd,bwd\n";
  static constexpr const char *kBackward[] = {"none", "activations", "full"};
  for (int s = 0; s < plan.stages(); ++s) {
    for (int j = 0; j < plan.microbatches(); ++j) {
      const RematDecision &d = plan.at(s, j);
      if (d == RematDecision{})
        continue;
      const bool selective = d.level > 0 && at(s) < selective_levels.size() &&
                             selective_levels[at(s)] == d.level;
      const std::string forward = d.forward == ForwardRemat::none ? "none"
                                  : d.level == 0                  ? "full"
                                  : selective                     ? "selective"
                                                                  : fmt::format("level:{}", d.level);
      text += fmt::format("{},{},{},{}\n", s, j, forward, kBackward[static_cast<int>(d.backward)]);
    }
  }
  return text;
}

const MemoryTrack &capped_track(const Scenario &scenario) {
  const MemoryTrack &track = checked_track(scenario);
  if (!track.cap)
    throw Error("remat needs a memory budget: give --K or --memory");
  return track;
}

} // namespace ppsim
