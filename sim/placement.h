#pragma once
// Stage-to-device maps of docs/model.md, "Placements".
#include <vector>

namespace ppsim {

enum class PlacementKind {
  single_wave, ///< S = p, stage s on device s
  round_robin, ///< S = v p, stage s on device s mod p (Megatron interleaved, looped BFS)
  v_shape,     ///< S = v p, zig-zag: t = s mod 2p on t if t < p else 2p-1-t (Hanayo, ZB-V, V-*)
  dual_pipe,   ///< two pipes of p stages: pipe 0 on devices 0..p-1, pipe 1 on p-1..0
};

/// pi(s) for every global stage; `chunks` is v (ignored for single_wave, 1 per pipe for
/// dual_pipe). Requires devices >= 1 and chunks >= 1 (v even for v_shape, checked by callers).
std::vector<int> make_placement(PlacementKind kind, int devices, int chunks);

} // namespace ppsim
