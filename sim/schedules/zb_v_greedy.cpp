// ZB-V greedy (docs/schedules.md, "zb-v-greedy"): the V placement scheduled by the zero-bubble
// greedy with a memory cap, refined with "approved bubbles" and the best of four W-filling flag
// settings. Source: sail-sg/zero-bubble-pipeline-parallelism,
// megatron/core/pipeline_parallel/zerobubble/ scheduler/zbv.py (PipelineGraph.try_v_schedule,
// create_schedule); arXiv 2401.10241 section 6.
#include "base/assert.h"
#include "base/error.h"
#include "base/index.h"
#include "sim/memory.h"
#include "sim/schedules/families.h"
#include "sim/schedules/greedy.h"
#include "sim/schedules/op_lists.h"

#include <algorithm>
#include <array>
#include <deque>
#include <fmt/format.h>
#include <optional>

namespace ppsim::schedules {
namespace {

/// The six node types of device i, numbered as in zbv.py (`cat * 2 + chunk`).
enum Type : int { kFa = 0, kFb = 1, kBb = 2, kBa = 3, kWb = 4, kWa = 5 };
constexpr int kTypes = 6;

/// One pass of try_v_schedule with fixed flags and approved-bubble vector.
class VGreedyRun {
public:
  VGreedyRun(const Scenario &scenario, const std::vector<double> &cap, bool fill_b, bool fill_f,
             const std::vector<std::int64_t> *approved)
      : p_(scenario.devices), m_(scenario.microbatches), fill_b_(fill_b), fill_f_(fill_f),
        cap_(&cap), cur_(at(p_), 0), mem_now_(at(p_), 0.0), bub_(at(p_), 0), pending_(at(p_)),
        order_(at(p_)), order_end_(at(p_)) {
    const std::size_t cells = at(p_) * kTypes;
    count_.assign(cells, 0);
    end_.assign(cells * at(m_), -1);
    cost_.resize(cells);
    mem_.resize(cells);
    stage_.resize(cells);
    for (int i = 0; i < p_; ++i) {
      const int a = i;
      const int b = 2 * p_ - 1 - i;
      const std::array<int, kTypes> stages{a, b, b, a, b, a};
      for (int type = 0; type < kTypes; ++type) {
        const int s = stages[at(type)];
        const PassMemory memory = pass_memory(scenario, s);
        const std::size_t cell = index(i, type);
        stage_[cell] = s;
        // The engine's durations, the runtime's overhead per action included.
        const OpKind kind = type <= kFb   ? OpKind::forward
                            : type <= kBa ? OpKind::backward_input
                                          : OpKind::backward_weight;
        cost_[cell] = op_duration(scenario, Op::make(kind, s, 0)).count();
        mem_[cell] = type <= kFb ? memory.forward : type <= kBa ? memory.backward : memory.weight;
      }
    }
    for (const Ticks t : scenario.boundary_transfer)
      comm_.push_back(t.count());
    if (approved != nullptr) {
      approved_ = *approved;
      max_approved_ = *std::max_element(approved_.begin(), approved_.end());
    }
    run();
  }

  [[nodiscard]] std::int64_t max_bubble() const { return max_bubble_; }
  [[nodiscard]] const std::vector<std::int64_t> &bubbles() const { return bub_; }

  [[nodiscard]] TimedSchedule result(const Scenario &scenario) const {
    constexpr std::array<OpKind, kTypes> kinds{OpKind::forward,         OpKind::forward,
                                               OpKind::backward_input,  OpKind::backward_input,
                                               OpKind::backward_weight, OpKind::backward_weight};
    TimedSchedule timed;
    timed.schedule = empty_schedule(scenario);
    timed.end.resize(at(p_));
    for (int i = 0; i < p_; ++i) {
      const auto device = at(i);
      for (std::size_t k = 0; k < order_[device].size(); ++k) {
        const auto [type, mb] = order_[device][k];
        timed.schedule.device_ops[device].push_back(
            Op::make(kinds[at(type)], stage_[index(i, type)], mb));
        timed.end[device].push_back(Ticks{order_end_[device][k]});
      }
    }
    return timed;
  }

private:
  [[nodiscard]] std::size_t index(int i, int type) const { return at(i) * kTypes + at(type); }
  [[nodiscard]] int count(int i, int type) const { return count_[index(i, type)]; }
  [[nodiscard]] std::int64_t end(int i, int type, int mb) const {
    return end_[index(i, type) * at(m_) + at(mb)];
  }
  [[nodiscard]] bool placed(int i, int type, int mb) const {
    return mb < m_ && end(i, type, mb) >= 0;
  }
  std::int64_t &cur(int i) { return cur_[at(i)]; }

  /// The device holding the cross-device input of `type` on device i (-1 when none):
  /// Fa and Bb flow to i+1, Fb and Ba to i-1 (docs/schedules.md, "zb-v-greedy").
  [[nodiscard]] int source_device(int i, int type) const {
    if (type == kFa || type == kBb)
      return i > 0 ? i - 1 : -1;
    if (type == kFb || type == kBa)
      return i + 1 < p_ ? i + 1 : -1;
    return -1;
  }
  /// Arrival time of the cross-device input of the next `type` node on device i.
  [[nodiscard]] std::int64_t arrival(int i, int type) const {
    const int from = source_device(i, type);
    const int mb = count(i, type);
    PPSIM_ASSERT(placed(from, type, mb));
    const int boundary = std::min(stage_[index(from, type)], stage_[index(i, type)]);
    return end(from, type, mb) + comm_[at(boundary)];
  }

  /// True when the next `type` node of device i exists and its input is placed (the turns
  /// Fa -> Fb on device p-1, Fb -> Bb on device 0, Bb -> Ba on device p-1 are same-device).
  [[nodiscard]] bool ready(int i, int type) const {
    const int mb = count(i, type);
    if (mb >= m_)
      return false;
    const int from = source_device(i, type);
    if (from >= 0)
      return placed(from, type, mb);
    if (type == kFb || type == kBb || type == kBa)
      return count(i, type - 1) > mb;
    return true;
  }

  [[nodiscard]] std::int64_t max_stage_bubble(int i) const {
    if (approved_.empty())
      return max_bubble_;
    return std::max(max_bubble_, max_approved_ - approved_[at(i)]);
  }

  void put(int type, int i) {
    const std::size_t cell = index(i, type);
    const int mb = count_[cell];
    PPSIM_ASSERT(mb < m_);
    // The reference asserts the cap on every put; here that is the user error.
    if (over_cap(i, mem_[cell]))
      throw cannot_fit_memory(i);
    const std::int64_t no_bubble = cur(i) + cost_[cell];
    std::int64_t t = no_bubble;
    if (source_device(i, type) >= 0)
      t = std::max(t, arrival(i, type) + cost_[cell]);
    if (count(i, kFa) > 0) {
      bub_[at(i)] += t - no_bubble;
      max_bubble_ = std::max(max_bubble_, bub_[at(i)]);
    }
    end_[cell * at(m_) + at(mb)] = t;
    cur(i) = t;
    mem_now_[at(i)] += mem_[cell];
    ++count_[cell];
    order_[at(i)].push_back({type, mb});
    order_end_[at(i)].push_back(t);
    if (type == kBb)
      pending_[at(i)].push_back(kWb);
    if (type == kBa)
      pending_[at(i)].push_back(kWa);
  }

  [[nodiscard]] bool has_pending(int i) const { return !pending_[at(i)].empty(); }

  void put_w(int i) {
    auto &queue = pending_[at(i)];
    const int type = queue.front();
    queue.pop_front();
    put(type, i);
  }

  [[nodiscard]] bool over_cap(int i, double delta) const {
    return ppsim::over_cap(mem_now_[at(i)] + delta, (*cap_)[at(i)]);
  }

  static CapUnreachable cannot_fit_memory(int device) {
    return CapUnreachable(
        fmt::format("schedule 'zb-v-greedy' cannot fit memory on device {}: the cap "
                    "leaves no room for the next op",
                    device));
  }

  /// Flushes W's until `delta` fits under the device cap; false, flushing none, when even all of
  /// them would not make room.
  bool make_room(int i, double delta) {
    double freed = 0;
    for (const int type : pending_[at(i)])
      freed += mem_[index(i, type)]; // W's changes are <= 0
    if (over_cap(i, delta + freed)) {
      stuck_device_ = i;
      return false;
    }
    while (over_cap(i, delta))
      put_w(i);
    return true;
  }

  /// W-filling before a node of `type` whose input crosses devices (zbv.py, phase 2).
  void fill_w(int i, int type, bool fill_when_over) {
    if (source_device(i, type) < 0)
      return;
    const std::int64_t arr = arrival(i, type);
    while (has_pending(i) && arr >= cur(i) + cost_[index(i, pending_[at(i)].front())]) {
      put_w(i);
    }
    if (has_pending(i) && arr - cur(i) > max_stage_bubble(i) - bub_[at(i)] && fill_when_over) {
      put_w(i);
    }
  }

  void warm_up() {
    for (int i = 0; i < p_; ++i)
      put(kFa, i);
    for (int i = p_ - 1; i >= 0; --i) {
      if (i < p_ - 1) {
        const std::int64_t arr = arrival(i, kFb);
        // #Fa(0) is the largest Fa count, so it bounds every device's puts below m (the
        // reference checks device i only and would overrun m on device 0 when m is small).
        while (mem_now_[at(i)] + mem_[index(i, kFa)] * (2 + 2 * i) <= (*cap_)[at(i)] &&
               cur(i) + cost_[index(i, kFa)] <= arr && count(0, kFa) < m_) {
          for (int j = 0; j <= i; ++j)
            put(kFa, j);
        }
      }
      put(kFb, i);
    }
    // With unequal per-stage costs (the reference assumes one F, B, W for all) a node's input
    // may not be placed yet; such nodes wait for a later sweep or round.
    int type = kFa;
    for (int i = 1; i < p_; ++i) {
      int idle_sweeps = 0; // per device: two sweeps without a put end its catch-up
      while (count(i, kFa) + count(i, kFb) < count(i - 1, kFa) + count(i - 1, kFb) ||
             (count(i, kFb) <= count(i - 1, kFb) && count(i - 1, kFb) < m_)) {
        bool any = false;
        for (int j = p_ - 1; j >= i; --j) {
          // A forward that does not fit waits for the steady phase (the reference asserts).
          if (!ready(j, type) || over_cap(j, mem_[index(j, type)]))
            continue;
          put(type, j);
          any = true;
        }
        type = type == kFa ? kFb : kFa;
        idle_sweeps = any ? 0 : idle_sweeps + 1;
        if (idle_sweeps >= 2)
          break;
      }
    }
  }

  void steady() {
    std::vector<int> choose_ba, choose_bb;
    // The reference runs 2m rounds, each putting one B per device; here rounds go on until every
    // B is placed, which is the same whenever every chosen node is ready (uniform costs).
    bool progress = true;
    while (progress && !all_backwards_placed()) {
      progress = false;
      for (int i = 0; i < p_; ++i)
        if (!make_room(i, std::max(mem_[index(i, kBb)], mem_[index(i, kBa)])))
          throw cannot_fit_memory(i);
      choose_ba.clear();
      choose_bb.clear();
      for (int i = 0; i < p_; ++i) {
        if (count(i, kBa) >= count(i, kBb)) {
          choose_bb.push_back(i);
        } else if (i == p_ - 1 || placed(i + 1, kBa, count(i, kBa)) || count(i, kBb) >= m_) {
          choose_ba.push_back(i);
        } else {
          choose_bb.push_back(i);
        }
      }
      for (auto it = choose_ba.rbegin(); it != choose_ba.rend(); ++it) {
        if (!ready(*it, kBa))
          continue;
        fill_w(*it, kBa, true);
        put(kBa, *it);
        progress = true;
      }
      for (const int i : choose_bb) {
        if (!ready(i, kBb))
          continue;
        fill_w(i, kBb, fill_b_);
        put(kBb, i);
        progress = true;
      }
      for (int i = 0; i < p_; ++i) {
        if (count(i, kFb) >= m_)
          continue;
        int type = -1;
        if (count(i, kFb) >= count(i, kFa)) {
          type = kFa;
        } else if (i == p_ - 1 || placed(i + 1, kFb, count(i, kFb))) {
          type = kFb;
        } else if (count(i, kFa) < m_ && (i == 0 || placed(i - 1, kFa, count(i, kFa)))) {
          type = kFa;
        }
        // An F that does not fit waits for a later round, when backwards have freed memory (the
        // reference asserts instead; with unequal stage costs the rounds drift apart).
        if (type < 0 || !ready(i, type) || !make_room(i, mem_[index(i, type)]))
          continue;
        fill_w(i, type, fill_f_);
        put(type, i);
        progress = true;
      }
    }
    if (!all_backwards_placed()) {
      // No round placed anything: a forward that did not fit holds its device back.
      throw cannot_fit_memory(stuck_device_.value_or(0));
    }
  }

  [[nodiscard]] bool all_backwards_placed() const {
    for (int i = 0; i < p_; ++i) {
      if (count(i, kBa) < m_ || count(i, kBb) < m_)
        return false;
    }
    return true;
  }

  void run() {
    warm_up();
    steady();
    for (int i = 0; i < p_; ++i) {
      while (has_pending(i))
        put_w(i);
    }
  }

  int p_;
  int m_;
  bool fill_b_;
  bool fill_f_;
  const std::vector<double> *cap_; ///< per device, same unit as mem_f
  std::vector<std::int64_t> cost_;
  std::vector<double> mem_;
  std::vector<int> stage_;
  std::vector<std::int64_t> comm_;
  std::vector<int> count_;
  std::vector<std::int64_t> end_; ///< -1 = not placed
  std::vector<std::int64_t> cur_;
  std::vector<double> mem_now_;
  std::optional<int> stuck_device_; ///< the last device whose forward did not fit
  std::vector<std::int64_t> bub_;
  std::int64_t max_bubble_ = 0; ///< bubbles only grow, so the running max is max_j bub[j]
  std::vector<std::int64_t> approved_;
  std::int64_t max_approved_ = 0;
  std::vector<std::deque<int>> pending_;
  std::vector<std::vector<std::pair<int, int>>> order_;
  std::vector<std::vector<std::int64_t>> order_end_;
};

} // namespace

std::optional<Error> zb_v_greedy_precondition(const Scenario &scenario,
                                              const GeneratorOptions & /*options*/) {
  return two_chunks_refusal("zb-v-greedy", scenario);
}

TimedSchedule zb_v_greedy_timed(const Scenario &scenario, double cap_share) {
  enforce(zb_v_greedy_precondition(scenario, {}));
  const int p = scenario.devices;
  std::vector<double> cap;
  for (int i = 0; i < p; ++i) {
    cap.push_back(cap_share * (pass_memory(scenario, i).forward +
                               pass_memory(scenario, 2 * p - 1 - i).forward));
  }
  std::optional<VGreedyRun> best;
  for (const bool fill_b : {true, false}) {
    for (const bool fill_f : {true, false}) {
      // Refinement: rerun with the previous pass's bubbles as the approved vector while the max
      // bubble strictly decreases (the recursion of try_v_schedule, unrolled).
      VGreedyRun current(scenario, cap, fill_b, fill_f, nullptr);
      while (true) {
        VGreedyRun next(scenario, cap, fill_b, fill_f, &current.bubbles());
        if (!(next.max_bubble() < current.max_bubble()))
          break;
        current = std::move(next);
      }
      if (!best || current.max_bubble() < best->max_bubble())
        best.emplace(std::move(current));
    }
  }
  return best->result(scenario);
}

Schedule zb_v_greedy(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  return zb_v_greedy_timed(scenario, scenario.activations.cap.value_or(scenario.devices)).schedule;
}

} // namespace ppsim::schedules
