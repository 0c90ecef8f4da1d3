#pragma once
// Remat decisions per (stage, microbatch) and their application to a schedule (docs/remat.md, "The
// three options" and "Simple policies"; docs/model.md, "Memory models" and "Dependencies"): a
// forward option inserts R right before B/BW, a backward option inserts RW or RBW right before W.
// The memory consequences (non-storing F, what B drops) are read from the schedule by the engine's
// memory model (sim/memory.h).
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim {

/// ELF option `full_fwd` (ppsim op R) or none.
enum class ForwardRemat : std::uint8_t { none, full };
/// ELF options `activations_bwd` (RW) and `full_bwd` (RBW), or none; split backward only.
enum class BackwardRemat : std::uint8_t { none, activations, full };

struct RematDecision {
  ForwardRemat forward = ForwardRemat::none;
  BackwardRemat backward = BackwardRemat::none;
  /// With forward full: 0 reruns the whole stage from its checkpoint (ELF's full_fwd); k >= 1
  /// follows the stage's k-th checkpoint level (docs/remat.md, "Checkpoint levels").
  std::uint8_t level = 0;

  friend bool operator==(const RematDecision &, const RematDecision &) = default;
};

/// One decision per (stage, microbatch) of one scenario.
class RematPlan {
public:
  RematPlan() = default;
  /// A plan with no recomputation for `stages` x `microbatches`.
  RematPlan(int stages, int microbatches);

  [[nodiscard]] int stages() const { return stages_; }
  [[nodiscard]] int microbatches() const { return microbatches_; }
  [[nodiscard]] const RematDecision &at(int stage, int microbatch) const;
  RematDecision &at(int stage, int microbatch);

  /// Number of R, RW and RBW ops the plan inserts.
  [[nodiscard]] int forward_count() const;
  /// Number of R ops that follow a checkpoint level (level >= 1).
  [[nodiscard]] int checkpoint_level_count() const;
  [[nodiscard]] int weight_input_count() const;
  [[nodiscard]] int full_backward_count() const;
  [[nodiscard]] int recompute_count() const;

  friend bool operator==(const RematPlan &, const RematPlan &) = default;

private:
  int stages_ = 0;
  int microbatches_ = 0;
  std::vector<RematDecision> decisions_;
};

/// The plan of `scenario`'s size that recomputes nothing.
RematPlan empty_plan(const Scenario &scenario);

/// Inserts the plan's R/RW/RBW ops into `base` (which must carry none). Throws Error when a
/// backward option targets an (s,j) whose backward is a full BW (docs/remat.md, "The three
/// options": backward options exist for split schedules only).
Schedule apply_plan(const Schedule &base, const RematPlan &plan);

/// `schedule` (which may recompute) with the recomputation ops of (stage, microbatch) replaced by
/// those of `decision`, placed where apply_plan places them (R right before the op holding its
/// B/BW, RW or RBW right before the op holding its W); every other op keeps its place. Throws
/// Error as apply_plan for a backward option on a BW.
Schedule with_decision(const Schedule &schedule, int stage, int microbatch,
                       const RematDecision &decision);

/// `schedule` without its R, RW and RBW ops: the base apply_plan started from.
Schedule without_recomputation(const Schedule &schedule);

/// Reads the decisions already present in a schedule (the inverse of apply_plan).
RematPlan plan_of(const Schedule &schedule, int stages, int microbatches);
/// Adds to `decision` what the recomputation op `ref` (R, RW or RBW) decides.
void take_recomputation(RematDecision &decision, const OpRef &ref);

/// Parses the CSV of docs/remat.md, "Simple policies": header `stage,microbatch,fwd,bwd`, then one
/// row per (s,j) with `fwd` in {none, full, selective, level:K} (K >= 1, a checkpoint level of
/// the stage; selective is level `selective_levels[s]`, Scenario::selective_levels, and refused
/// where that is 0 or missing) and `bwd` in {none, activations, full}; unlisted pairs recompute
/// nothing. Errors name `source` and the line.
RematPlan parse_plan_csv(std::string_view text, const std::string &source, int stages,
                         int microbatches, const std::vector<int> &selective_levels = {});
/// The CSV text of a plan (only rows with a decision), readable by parse_plan_csv with the same
/// `selective_levels` (a stage's selective level is written `selective`).
std::string format_plan_csv(const RematPlan &plan, const std::vector<int> &selective_levels = {});

} // namespace ppsim

namespace ppsim {

/// The memory track whose cap the remat decisions must respect, checked_track (sim/memory.h).
/// Throws Error when that track has no cap.
const MemoryTrack &capped_track(const Scenario &scenario);

} // namespace ppsim
