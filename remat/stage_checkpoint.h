#pragma once
// Checkpointing inside one pipeline stage from its per-layer costs (docs/remat.md, "ppsim
// checkpoint"): the rotor dynamic program (Beaumont, Eyraud-Dubois, Herrmann, Joly, Shilova,
// arXiv 1911.13214) on the chain of the stage's layers, each recorded whole or, where the cost
// file measures it, selectively (Korthikanti et al., arXiv 2205.05198: the attention core is
// dropped and recomputed in the backward), the multi-option form of Rockmate. For every memory
// level it gives the stage's forward time, backward time (with its recomputation) and what the
// stage keeps from F to B, and which layers store, checkpoint or recompute.
#include "costs/cost_file.h"
#include "remat/rotor.h"
#include "sim/scenario.h"

#include <vector>

namespace ppsim {

/// What a layer's first forward does (the ops of a rotor sequence before the loss).
enum class LayerAction : char {
  store = 'S',           ///< recording forward: keeps everything its backward needs
  store_selective = 's', ///< recording forward without the attention core (recomputed in B)
  checkpoint = 'C',      ///< forward without recording, its input kept: recomputed before B
  recompute = 'R',       ///< forward without recording, nothing kept: recomputed from a checkpoint
};

/// One memory level of a stage, for one microbatch.
struct CheckpointOption {
  double budget_bytes = 0; ///< the rotor budget (remat/rotor.h) the option was found for
  double forward_ms = 0;   ///< the first forward of every layer
  double backward_ms = 0;  ///< backward of every layer, recomputation included
  double kept_bytes = 0;   ///< held from the last forward to the first backward
  double peak_bytes = 0;   ///< largest memory while the stage runs (inputs, records, transients)
  std::vector<LayerAction> actions; ///< one per layer of the stage
};

/// The chain of `layers` (consecutive rows of a cost file) in bytes: a layer's input is x, its
/// full record activation_bytes_full (at least its output), its no-grad forward recompute_ms
/// (else fwd_ms); backward = bwd_total_ms (else B + W). With `selective` and a measured
/// activation_bytes_selective, a second record option keeps that and adds
/// recompute_selective_ms to the backward. The loss node stands for the output gradient's
/// arrival (zero time).
rotor::Chain stage_chain(const std::vector<CostRow> &layers, bool selective);

/// Store every layer whole: the level needing the most memory and the least time.
CheckpointOption store_everything(const std::vector<CostRow> &layers);

/// The time/memory front of the stage for levels up to `max_budget_bytes`, discretised into
/// `slots` (sizes rounded up); a level keeps the DP's plan only when its byte replay peaks within
/// the level. Ordered by decreasing memory, each strictly faster than the next. Empty when
/// nothing fits.
std::vector<CheckpointOption> checkpoint_front(const std::vector<CostRow> &layers,
                                               double max_budget_bytes, int slots, bool selective);

/// Up to `count` levels of the front that recompute something (storing everything is the
/// stage's plain F and B): all of them when there are few, else spread evenly from the least
/// recomputation to the least memory. Ordered by decreasing kept memory.
std::vector<CheckpointOption> checkpoint_levels(const std::vector<CostRow> &layers, int count,
                                                int slots = 500);

/// `scenario` with up to `count` checkpoint levels per stage (docs/remat.md, "Checkpoint
/// levels"): each level's R is the time (forward and backward) it adds over storing everything
/// (in ticks, the front's milliseconds times `ticks_per_ms`), its byte track keeps the level's F->B memory and
/// peaks at the level's peak, and the count track scales both by the stage's count/byte ratio.
/// `stage_layers` holds one pipe's stages; further pipes repeat them. Throws Error when a stage's
/// layers have no activation sizes.
Scenario with_checkpoint_levels(const Scenario &scenario,
                                const std::vector<std::vector<CostRow>> &stage_layers, int count,
                                double ticks_per_ms);

} // namespace ppsim
