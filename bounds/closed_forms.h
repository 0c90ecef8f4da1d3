#pragma once
// Makespan closed forms of the standard schedules (spec bounds.md 7), used as regression checks
// and printed by `ppsim bounds` next to the lower bounds.
#include "sim/scenario.h"
#include "base/time.h"

#include <optional>
#include <string_view>

namespace ppsim {

/// The makespan of registered schedule `schedule` on `scenario` by its closed form, or nullopt
/// when the schedule has none or the scenario is outside its validity range. Every form needs
/// uniform stages (equal F, B, W, R on every stage), no contention, no blocking sends and no
/// faster overlapped ops; all but GPipe need zero transfer time. Per stage (per chunk) costs:
/// - gpipe: `(m+p-1)(F+B+W) + 2(p-1)c`;
/// - 1f1b: `(m+p-1)(F+B+W)`; 1f1b-split: `m(F+B+W) + (p-1)(F+B)`;
/// - interleaved-1f1b (g = p, m mod p = 0): `(vm+p-1)(F+B+W)` (Megatron);
/// - hanayo (m >= p): `vm(F+Bf) + 2(p-1) max(F, Bf)` (full-stage form of bounds.md 7);
/// - zb-h1 (m >= p, W <= min(F, B)): `m(F+B+W) + (p-1)(F+B-W)` (ZB paper, arXiv 2401.10241);
/// - zb-h2 (m >= 2p-1, F = B = W): `(p-1)F + m(F+B+W)`;
/// - zb-v (m >= 2p-1, F = B = W): `(p-1)F + 2m(F+B+W)`;
/// - allremat-1f1b (m >= 2, F <= Bf, R = F, early remat): `m(2F+Bf) + (p-1)(F+Bf) - 2F`.
/// `group_size` is Megatron's g (0 = p).
std::optional<Ticks> closed_form_makespan(const Scenario &scenario, std::string_view schedule,
                                          int group_size = 0);

} // namespace ppsim
