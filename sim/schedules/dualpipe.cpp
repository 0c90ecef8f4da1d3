// DualPipeV and DualPipe with overlapped F&B ops (docs/schedules.md, "dualpipe and dualpipev",
// oracle O-16). Sources: PyTorch ScheduleDualPipeV (pytorch/pytorch
// torch/distributed/pipelining/schedules.py), deepseek-ai/DualPipe dualpipe/dualpipev.py and
// dualpipe/dualpipe.py. The OV duration is the scenario's overlap_duration (F&B); the engine
// applies it.
#include "base/error.h"
#include "base/index.h"
#include "sim/schedules/families.h"
#include "sim/schedules/op_lists.h"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <string_view>

namespace ppsim::schedules {
namespace {

/// One device's row under construction: its two stages (0 = fed from the device's own side,
/// 1 = the turned-back stage), their F and backward counters, and the FIFO of W's whose B ran.
class DualRow {
public:
  DualRow(std::vector<Op> &ops, int first, int second) : ops_(ops), stage_{first, second} {}

  void forward(int which) {
    ops_.push_back(Op::make(OpKind::forward, stage_[which], next_f_[which]++));
  }
  /// B (input gradient, its W queued) when `zero_bubble`, else the full backward BW.
  void backward(int which, bool zero_bubble) {
    const OpKind kind = zero_bubble ? OpKind::backward_input : OpKind::backward_full;
    const int j = next_b_[which]++;
    ops_.push_back(Op::make(kind, stage_[which], j));
    if (zero_bubble)
      pending_w_.push_back(OpRef{OpKind::backward_weight, stage_[which], j});
  }
  /// The oldest queued weight gradient; nothing when the queue is empty (as in the source).
  void weight() {
    if (pending_w_.empty())
      return;
    ops_.push_back(Op{pending_w_.front(), {}});
    pending_w_.pop_front();
  }
  /// OV(F(stage forward_of); BW(stage backward_of)).
  void overlapped(int forward_of, int backward_of) {
    const OpRef f{OpKind::forward, stage_[forward_of], next_f_[forward_of]++};
    const OpRef b{OpKind::backward_full, stage_[backward_of], next_b_[backward_of]++};
    ops_.push_back(Op::overlap(f, b));
  }

private:
  std::vector<Op> &ops_;
  int stage_[2];
  int next_f_[2] = {0, 0};
  int next_b_[2] = {0, 0};
  std::deque<OpRef> pending_w_;
};

/// The 8 steps of docs/schedules.md, "dualpipe and dualpipev" for `ranks` ranks, this device's
/// `rank`,
/// `microbatches` per stage, stages `first` and `second`.
void dual_row(std::vector<Op> &ops, int ranks, int rank, int microbatches, int first, int second) {
  DualRow row(ops, first, second);
  const int tail = ranks - rank - 1;
  // 1-2: warm-up forwards, then pairs on both stages.
  for (int k = 0; k < 2 * tail; ++k)
    row.forward(0);
  for (int k = 0; k <= rank; ++k) {
    row.forward(0);
    row.forward(1);
  }
  // 3: zero-bubble backwards of the turned-back stage, each W popped at once.
  for (int k = 0; k < tail; ++k) {
    row.backward(1, true);
    row.weight();
    row.forward(1);
  }
  // 4: steady state of overlapped pairs; the middle device starts without overlap.
  for (int i = 0; i < microbatches - 2 * ranks + rank + 1; ++i) {
    if (i == 0 && rank == ranks - 1) {
      row.forward(0);
      row.backward(1, false);
    } else {
      row.overlapped(0, 1);
    }
    row.overlapped(1, 0);
  }
  // 5: the last forwards of stage 1, overlapped with backwards of stage 0.
  for (int k = 0; k < tail; ++k) {
    row.backward(1, false);
    row.overlapped(1, 0);
  }
  // 6: backward pairs, switching to split B halfway (before the s1 op for odd ranks).
  bool zero_bubble = false;
  for (int i = 0; i <= rank; ++i) {
    const bool switch_now = i == (rank + 1) / 2;
    if (switch_now && rank % 2 == 1)
      zero_bubble = true;
    row.backward(1, zero_bubble);
    if (switch_now && rank % 2 == 0)
      zero_bubble = true;
    row.backward(0, zero_bubble);
  }
  // 7-8: drain the queued weight gradients.
  for (int k = 0; k < tail; ++k) {
    row.weight();
    row.backward(0, true);
  }
  for (int k = 0; k <= rank; ++k)
    row.weight();
}

// Both DualPipe forms need m >= 2p microbatches; `counted` says which m the user gave.
std::optional<Error> microbatch_refusal(std::string_view schedule, int p, int m,
                                        std::string_view counted) {
  if (m >= 2 * p)
    return std::nullopt;
  return Error(fmt::format("schedule '{}' needs m >= 2p = {} microbatches{}, got m = {}", schedule,
                           2 * p, counted, m));
}

} // namespace

std::optional<Error> dualpipev_precondition(const Scenario &scenario,
                                            const GeneratorOptions & /*options*/) {
  if (auto refusal = two_chunks_refusal("dualpipev", scenario))
    return refusal;
  return microbatch_refusal("dualpipev", scenario.devices, scenario.microbatches,
                            " (the number of stages)");
}

Schedule dualpipev(const Scenario &scenario, const GeneratorOptions &options) {
  enforce(dualpipev_precondition(scenario, options));
  const int p = scenario.devices;
  const int m = scenario.microbatches;
  Schedule schedule = empty_schedule(scenario);
  for (int r = 0; r < p; ++r) {
    dual_row(schedule.device_ops[at(r)], p, r, m, r, 2 * p - 1 - r);
  }
  return schedule;
}

std::optional<Error> dualpipe_precondition(const Scenario &scenario,
                                           const GeneratorOptions & /*options*/) {
  const int p = scenario.devices;
  if (scenario.pipes != 2) {
    return Error("schedule 'dualpipe' needs the two-pipe placement");
  }
  if (p % 2 != 0) {
    return Error(fmt::format("schedule 'dualpipe' needs an even number of devices, got p = {}", p));
  }
  // The builder splits m over the 2 pipes: the user's m is the total.
  return microbatch_refusal("dualpipe", p, scenario.total_microbatches(), " in total");
}

Schedule dualpipe(const Scenario &scenario, const GeneratorOptions &options) {
  enforce(dualpipe_precondition(scenario, options));
  const int p = scenario.devices;
  Schedule schedule = empty_schedule(scenario);
  for (int r = 0; r < p; ++r) {
    const int half_rank = std::min(r, p - 1 - r);
    // Phase 0 runs stage h of the pipe entering on this side, phase 1 stage p-1-h of the other
    // pipe (pipe d's stage s has global id d*p + s; docs/model.md, "Placements").
    const int near_pipe = r < p / 2 ? 0 : 1;
    const int first = near_pipe * p + half_rank;
    const int second = (1 - near_pipe) * p + (p - 1 - half_rank);
    dual_row(schedule.device_ops[at(r)], p / 2, half_rank, scenario.microbatches, first, second);
  }
  return schedule;
}

} // namespace ppsim::schedules
