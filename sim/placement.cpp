#include "sim/placement.h"

#include "base/assert.h"

namespace ppsim {

std::vector<int> make_placement(PlacementKind kind, int devices, int chunks) {
  PPSIM_ASSERT(devices >= 1 && chunks >= 1);
  std::vector<int> placement;
  switch (kind) {
  case PlacementKind::single_wave:
    for (int s = 0; s < devices; ++s)
      placement.push_back(s);
    break;
  case PlacementKind::round_robin:
    for (int s = 0; s < devices * chunks; ++s)
      placement.push_back(s % devices);
    break;
  case PlacementKind::v_shape:
    for (int s = 0; s < devices * chunks; ++s) {
      const int t = s % (2 * devices);
      placement.push_back(t < devices ? t : 2 * devices - 1 - t);
    }
    break;
  case PlacementKind::dual_pipe:
    for (int s = 0; s < devices; ++s)
      placement.push_back(s);
    for (int s = 0; s < devices; ++s)
      placement.push_back(devices - 1 - s);
    break;
  }
  return placement;
}

} // namespace ppsim
