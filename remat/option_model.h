#pragma once
// The memory of a base schedule as an affine function of its remat options (docs/remat.md,
// "The ILP"): the base order gets a slot for every option (R right before each B/BW, RW and RBW
// right before each W), and every op's alloc, release and transient is a constant plus one
// coefficient per option of its (stage, microbatch). The StageRemat ILP turns the walk into
// memory constraints; the greedy baseline walks it once per device to choose options.
#include "base/index.h"
#include "remat/plan.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <algorithm>
#include <array>
#include <vector>

namespace ppsim {

/// The options of one (stage, microbatch): R (x), RW (y), RBW (z), then R at each checkpoint
/// level of the stage (docs/remat.md, "Checkpoint levels"). R and its levels exclude each other,
/// as RW and RBW do.
enum RematChoice {
  kForwardChoice = 0,
  kWeightInputChoice = 1,
  kFullBackwardChoice = 2,
  kFirstLevelChoice = 3
};
inline constexpr int kChoiceCount = kFirstLevelChoice + kMaxStageLevels;

/// True for the choices that put an R before B/BW (x and the levels).
[[nodiscard]] constexpr bool is_forward_choice(int choice) {
  return choice == kForwardChoice || choice >= kFirstLevelChoice;
}
/// The R level of a forward choice: 0 for x, k for the k-th checkpoint level.
[[nodiscard]] constexpr int level_of_choice(int choice) {
  return choice == kForwardChoice ? 0 : choice - kFirstLevelChoice + 1;
}
/// The choice of R level `level`.
[[nodiscard]] constexpr int choice_of_level(int level) {
  return level == 0 ? kForwardChoice : kFirstLevelChoice + level - 1;
}
/// Whether `decision` takes `choice`: its R at that level, or that backward option.
[[nodiscard]] bool takes(const RematDecision &decision, int choice);

/// The checkpoint levels stage `stage` offers in the scenario's costs and in `track`.
[[nodiscard]] int checkpoint_levels(const Scenario &scenario, const MemoryTrack &track, int stage);

/// value = constant + sum_c coefficient[c] * option(c), options of the op's own (s,j).
struct Affine {
  double constant = 0;
  std::array<double, kChoiceCount> coefficient{};

  [[nodiscard]] bool varies() const {
    return std::any_of(coefficient.begin(), coefficient.end(), [](double c) { return c != 0; });
  }
};

struct AffineEffect {
  Affine alloc, release, transient;
};

/// The effect of every kind of op of one stage. `engine` reads the engine's own memory model
/// (sim/memory.h) on one-microbatch probe orders, split and full: an op's effect depends on one
/// option at most, so the differences between the probes are exact coefficients. `reference` is the
/// lumped accounting of ELF's formulation (recomputation has no memory of its own).
class StageEffects {
public:
  static StageEffects engine(const Scenario &scenario, const MemoryTrack &track, int stage);
  static StageEffects reference(const StageMemory &memory);

  /// The checkpoint levels of the stage (0 for the reference).
  [[nodiscard]] int levels() const { return levels_; }

  [[nodiscard]] const AffineEffect &of(OpKind kind) const { return effects_[at(kind)]; }

private:
  std::array<AffineEffect, kOpKindCount> effects_{};
  int levels_ = 0;
};

/// The base order with a slot for every option. Throws Error on overlapped F&B ops or a base
/// that already recomputes.
Schedule with_all_slots(const Schedule &base);

/// The option key of (stage, microbatch, choice), dense in [0, stages * microbatches *
/// kChoiceCount).
[[nodiscard]] inline int option_key(int stage, int microbatch, int microbatches, int choice) {
  return (stage * microbatches + microbatch) * kChoiceCount + choice;
}

/// Walks one device's slotted order position by position. Before the op at a position runs, the
/// resident memory is `constant()` plus, for every option key k touched so far, `resident(k)`
/// times that option; the op then adds its alloc and transient, and afterwards its
/// alloc - release stays.
class DeviceMemoryWalk {
public:
  DeviceMemoryWalk(const std::vector<StageEffects> &stages, int microbatches, int option_keys);

  /// The choices any stage offers: x, y, z and the most levels of a stage (loops stop there).
  [[nodiscard]] int choices() const { return choices_; }
  /// Restarts at the first position of a device holding `constant` from start to end.
  void start(double constant);
  /// The op's alloc + transient while it runs.
  [[nodiscard]] Affine during(const OpRef &op) const;
  /// Adds the op's alloc - release to the resident memory. Keys whose resident amount is back
  /// at zero may leave `touched()`.
  void advance(const OpRef &op);

  [[nodiscard]] double constant() const { return constant_; }
  [[nodiscard]] const std::vector<int> &touched() const { return touched_; }
  [[nodiscard]] double resident(int key) const { return resident_[at(key)]; }

private:
  const std::vector<StageEffects> &stages_;
  int microbatches_;
  int choices_;
  double constant_ = 0;
  std::vector<double> resident_;
  std::vector<char> is_touched_;
  std::vector<int> touched_;
  std::size_t settled_ = 0; // touched keys back at zero, removed in batches
};

} // namespace ppsim
