#pragma once
// Megatron-LM's virtual-pipeline schedule table (docs/schedules.md, "interleaved-1f1b and
// looped-bfs", oracle O-9), exposed as a pure function so it can be tested on its own. Source:
// NVIDIA/Megatron-LM megatron/core/pipeline_parallel/schedules.py (get_schedule_table).
#include "base/error.h"

#include <optional>
#include <vector>

namespace ppsim::schedules {

/// One entry of the table: the k-th forward (or backward) of a device runs this pair.
struct MicrobatchChunk {
  int microbatch = 0;
  int chunk = 0;

  friend bool operator==(const MicrobatchChunk &, const MicrobatchChunk &) = default;
};

/// The Error unless p <= g <= m and m mod g is 0 or at least p (Megatron's ValueError and its
/// "dependency bubbles" RuntimeError), nullopt when g is allowed.
std::optional<Error> megatron_group_size_refusal(int devices, int microbatches, int group_size);

/// The Error PyTorch's ScheduleInterleaved1F1B raises when m does not split evenly into its
/// max(1, m div p) rounds, nullopt when it does.
std::optional<Error> pytorch_group_size_refusal(int devices, int microbatches);
/// The group size of PyTorch's ScheduleInterleaved1F1B, the default: m / max(1, m div p)
/// (p when p divides m, m when m < p), for m that pytorch_group_size_refusal accepts.
int pytorch_group_size(int devices, int microbatches);

/// For each group [lo, min(lo + g, m)) and chunk k = 0..v-1, the pairs (mb, k) for every mb of
/// the group, in that order (the last group may be shorter). Has m * v entries.
std::vector<MicrobatchChunk> megatron_schedule_table(int microbatches, int chunks, int group_size);

} // namespace ppsim::schedules
