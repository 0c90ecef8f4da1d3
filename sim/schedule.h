#pragma once
// The schedule IR: what a generator produces and the engine replays (docs/model.md, "Vocabulary",
// 8). Generators include only this header; they never see the engine.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim {

/// Kinds of compute op (docs/model.md, "Vocabulary").
enum class OpKind : std::uint8_t {
  forward,                 ///< F
  backward_input,          ///< B: gradient w.r.t. the stage input
  backward_weight,         ///< W: gradient w.r.t. the stage weights
  backward_full,           ///< BW: the full backward, B then W in one op, duration B + W
  recompute_forward,       ///< R: forward recomputation before B/BW
  recompute_weight_inputs, ///< RW: recompute what W needs, before W
  recompute_full_backward, ///< RBW: forward + B recomputation before W
  overlapped,              ///< OV: an F and a backward executed as one op (DualPipe)
};
inline constexpr int kOpKindCount = 8;

/// True for R, RW and RBW: ops that redo work a storing schedule would not.
constexpr bool is_recompute(OpKind kind) {
  return kind == OpKind::recompute_forward || kind == OpKind::recompute_weight_inputs ||
         kind == OpKind::recompute_full_backward;
}

/// Short ppsim token of a kind: "F", "B", "W", "BW", "R", "RW", "RBW", "OV".
std::string_view op_kind_token(OpKind kind);

/// One (kind, stage, microbatch) unit of work. Stage ids are global (`d*p + s` for DualPipe).
/// An R also says how it recomputes: level 0 reruns the whole stage forward from the stage's
/// checkpoint; level k >= 1 follows the stage's k-th checkpointing level (Scenario stage
/// costs and memory, docs/remat.md "Checkpoint levels").
struct OpRef {
  OpKind kind = OpKind::forward;
  std::uint8_t level = 0;
  std::int32_t stage = 0;
  std::int32_t microbatch = 0;

  constexpr OpRef() = default;
  constexpr OpRef(OpKind kind_, std::int32_t stage_, std::int32_t microbatch_,
                  std::uint8_t level_ = 0)
      : kind(kind_), level(level_), stage(stage_), microbatch(microbatch_) {}

  friend bool operator==(const OpRef &, const OpRef &) = default;
};

/// An entry of a device's list: a single op, or for `overlapped` a forward (`first`) and a
/// backward (`second`, B or BW) run together.
struct Op {
  OpRef first;
  OpRef second{}; ///< only meaningful when first.kind == OpKind::overlapped

  [[nodiscard]] OpKind kind() const { return first.kind; }
  /// Builds a plain op.
  static Op make(OpKind kind, int stage, int microbatch, std::uint8_t level = 0) {
    return Op{OpRef{kind, stage, microbatch, level}, {}};
  }
  /// Builds an overlapped pair; `forward` must be an F and `backward` a B or BW.
  static Op overlap(OpRef forward, OpRef backward) {
    return Op{OpRef{OpKind::overlapped, forward.stage, forward.microbatch}, backward};
  }
  /// The sub-ops this entry executes: one, or two for an overlapped pair.
  [[nodiscard]] int sub_op_count() const { return kind() == OpKind::overlapped ? 2 : 1; }
  [[nodiscard]] OpRef sub_op(int index) const {
    if (kind() != OpKind::overlapped)
      return first;
    return index == 0 ? OpRef{OpKind::forward, first.stage, first.microbatch} : second;
  }

  friend bool operator==(const Op &, const Op &) = default;
};

/// "F(2,3)", "BW(0,1)", "OV(F(0,7);BW(7,3))" - the form used in messages and reports.
std::string describe(const Op &op);
std::string describe(const OpRef &op);

/// Per-device ordered op lists (device index = position).
struct Schedule {
  std::string name;
  std::vector<std::vector<Op>> device_ops;

  [[nodiscard]] int device_count() const { return static_cast<int>(device_ops.size()); }
  [[nodiscard]] std::size_t op_count() const;
  /// The R, RW and RBW ops of every device.
  [[nodiscard]] std::size_t recompute_op_count() const;
};

} // namespace ppsim
