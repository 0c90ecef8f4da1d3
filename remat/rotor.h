#pragma once
// rotor: optimal persistent checkpointing of a heterogeneous chain on one device (docs/remat.md
// 5; Beaumont, Eyraud-Dubois, Herrmann, Joly, Shilova, "Optimal checkpointing for heterogeneous
// chains", arXiv 1911.13214, HAL hal-02352969; recurrence as in the ColossalAI port
// `ckpt_solver_rotor.py`, multi-option variant as in topal-team/rockmate `rotor_solver.py`).
// Sizes are whole memory slots (discretise with `discretize`); times are exact doubles. A
// "budget" here is the paper's word: the memory slots the chain may use (docs/model.md, "Words").
#include <cstdint>
#include <limits>
#include <vector>

namespace ppsim::rotor {

/// One way to run a layer's recording forward and its backward (docs/remat.md, "Multi-option
/// layers").
struct RecordOption {
  double forward_time = 0;
  double backward_time = 0;
  std::int64_t stored = 0;        ///< what the recording forward keeps (xbar / cbw)
  std::int64_t forward_peak = 0;  ///< transient of the recording forward (ftmp / fwd_tmp)
  std::int64_t backward_peak = 0; ///< transient of the backward (btmp / bwd_tmp)
  std::int64_t required = 0;      ///< memory to run this forward and its backward alone
};

struct Layer {
  double nograd_forward_time = 0;       ///< F_ck / F_n time (ftime / ff_fw)
  std::int64_t nograd_forward_peak = 0; ///< their transient (ftmp / ff_fwd_tmp)
  std::vector<RecordOption> options;    ///< at least one
};

/// `n` layers plus the loss node at index n; `activation[l]` = size of a^{l-1} (length n+2,
/// `activation[0]` the chain input, `activation[n+1] = 0`).
struct Chain {
  std::vector<Layer> layers;
  std::vector<std::int64_t> activation;
  [[nodiscard]] int length() const { return static_cast<int>(layers.size()) - 1; }
};

/// The single-option chain of docs/remat.md, "Chain and operations" (arrays without their padding
/// entries).
struct ChainArrays {
  std::vector<double> ftime;      ///< n
  std::vector<double> btime;      ///< n + 1 (the last is the loss)
  std::vector<std::int64_t> x;    ///< n + 1
  std::vector<std::int64_t> xbar; ///< n + 1 (xbar[0] unused)
  std::vector<std::int64_t> ftmp; ///< n
  std::vector<std::int64_t> btmp; ///< n + 1
};
/// Builds the chain of docs/remat.md, "Recurrence" (base-case memory rule included in `required`).
Chain single_option_chain(const ChainArrays &arrays);

/// One layer of the multi-option variant (docs/remat.md, "Multi-option layers").
struct OptionArrays {
  double forward_time = 0, backward_time = 0;
  std::int64_t stored = 0, forward_peak = 0, backward_peak = 0; ///< cbw[l+1][q], fwd/bwd_tmp
};
struct MultiLayerArrays {
  double nograd_forward_time = 0;       ///< ff_fw
  std::int64_t nograd_forward_peak = 0; ///< ff_fwd_tmp
  std::vector<OptionArrays> options;
};
/// `cw` has n+1 entries (layer inputs and the loss input); the loss costs `loss_time`.
Chain multi_option_chain(const std::vector<MultiLayerArrays> &layers,
                         const std::vector<std::int64_t> &cw, double loss_time);

/// Replaces every size by ceil(size / unit), unit = budget / slots (docs/remat.md,
/// "Discretisation").
Chain discretize(const Chain &chain_in_bytes, double budget_bytes, int slots);

enum class OpKind { forward_checkpoint, forward_nograd, forward_record, backward, loss };
struct Op {
  OpKind kind = OpKind::loss;
  int layer = 0;
  int option = 0; ///< for forward_record and backward
  friend bool operator==(const Op &, const Op &) = default;
};

inline constexpr double kInfeasible = std::numeric_limits<double>::infinity();

/// The most entries a Table holds (about 800 MB).
inline constexpr double kMaxTableEntries = 0x1p26;

/// The DP table C(mm, i, j) for mm = 0..budget - activation[0] (docs/remat.md, "Recurrence"), with
/// back-pointers. One table answers every budget up to the one it was built for. Throws Error
/// past kMaxTableEntries.
class Table {
public:
  Table(const Chain &chain, std::int64_t budget);

  /// Optimal time within `budget` (<= the table's), or kInfeasible.
  [[nodiscard]] double time(std::int64_t budget) const;
  /// The op sequence achieving time(budget) (docs/remat.md, "Reconstruction"); empty when
  /// infeasible.
  [[nodiscard]] std::vector<Op> sequence(std::int64_t budget) const;

private:
  [[nodiscard]] std::size_t index(std::int64_t mm, int i, int j) const;
  void build(std::int64_t mm, int i, int j);
  void reconstruct(int i, int j, std::int64_t mm, std::vector<Op> &out) const;

  const Chain &chain_;
  std::int64_t mm_max_;
  int n_;
  std::vector<double> forward_prefix_; // sums of nograd forward times
  std::vector<std::int64_t> mmin_;     // quick infeasibility bound per (i,j)
  std::vector<double> value_;
  std::vector<std::int32_t> choice_; // k > 0: leaf at k; -(q+1): record option q
};

/// The memory peak and time of a sequence replayed with a live-tensor counter (docs/remat.md,
/// "Reconstruction").
struct Replay {
  std::int64_t peak = 0;
  double time = 0;
  double forward_time = 0;       ///< ops before the loss (a pipeline stage's F)
  double backward_time = 0;      ///< the loss and the ops after it (the stage's B)
  std::int64_t kept_at_loss = 0; ///< what the sequence holds when the loss starts
};
Replay replay(const Chain &chain, const std::vector<Op> &sequence);

/// One (F time, B time, kept memory) option of a stage derived from its layers, one per
/// distinct optimum over the budgets 0..max_budget (docs/remat.md, "rotor").
struct StageOption {
  std::int64_t budget = 0;
  double forward_time = 0, backward_time = 0;
  std::int64_t kept = 0;
  std::int64_t peak = 0;
};
std::vector<StageOption> stage_options(const Chain &chain, std::int64_t max_budget);

} // namespace ppsim::rotor
