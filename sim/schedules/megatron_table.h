#pragma once
// Megatron-LM's virtual-pipeline schedule table (docs/schedules.md, "interleaved-1f1b and
// looped-bfs", oracle O-9), exposed as a pure function so it can be tested on its own. Source:
// NVIDIA/Megatron-LM megatron/core/pipeline_parallel/schedules.py (get_schedule_table).
#include <vector>

namespace ppsim::schedules {

/// One entry of the table: the k-th forward (or backward) of a device runs this pair.
struct MicrobatchChunk {
  int microbatch = 0;
  int chunk = 0;

  friend bool operator==(const MicrobatchChunk &, const MicrobatchChunk &) = default;
};

/// Throws Error unless p <= g <= m and m mod g is 0 or at least p (Megatron's ValueError and
/// its "dependency bubbles" RuntimeError).
void check_megatron_group_size(int devices, int microbatches, int group_size);

/// The group size of PyTorch's ScheduleInterleaved1F1B, the default: m / max(1, m div p)
/// (p when p divides m, m when m < p). Throws Error when m does not split evenly, as PyTorch does.
int pytorch_group_size(int devices, int microbatches);

/// For each group [lo, min(lo + g, m)) and chunk k = 0..v-1, the pairs (mb, k) for every mb of
/// the group, in that order (the last group may be shorter). Has m * v entries.
std::vector<MicrobatchChunk> megatron_schedule_table(int microbatches, int chunks, int group_size);

} // namespace ppsim::schedules
