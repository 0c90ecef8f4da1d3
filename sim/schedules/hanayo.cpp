// Hanayo wave-like pipeline in the ELF reference order (docs/schedules.md, "hanayo").
// Sources: arXiv 2308.15762 (placement); topal-team/elf elf/scheduling/schedulers.py
// (generate_hanayo_schedule), whose order ppsim follows because Hanayo has no official code.
#include "base/error.h"
#include "base/index.h"
#include "sim/schedules/families.h"
#include "sim/schedules/op_lists.h"

#include <algorithm>
#include <fmt/format.h>

namespace ppsim::schedules {

std::optional<Error> hanayo_precondition(const Scenario &scenario,
                                         const GeneratorOptions & /*options*/) {
  if (scenario.chunks < 2 || scenario.chunks % 2 != 0) {
    return Error(
        fmt::format("schedule 'hanayo' needs an even v = 2 x waves, got v = {}", scenario.chunks));
  }
  return std::nullopt;
}

Schedule hanayo(const Scenario &scenario, const GeneratorOptions &options) {
  enforce(hanayo_precondition(scenario, options));
  const int p = scenario.devices;
  const int m = scenario.microbatches;
  const int waves = scenario.chunks / 2;
  const int per_leg = m * waves; // forwards of descending legs = backwards of ascending legs
  Schedule schedule = empty_schedule(scenario);
  for (int r = 0; r < p; ++r) {
    auto &ops = schedule.device_ops[at(r)];
    ops.reserve(4 * at(per_leg));
    // L_r: leg 2w descends the wave (stage 2wp + r), leg 2w+1 ascends it (stage 2wp + 2p-1-r).
    const auto leg = [&](int index) {
      const int wave = index / 2;
      return index % 2 == 0 ? 2 * wave * p + r : 2 * wave * p + 2 * p - 1 - r;
    };
    int descending_forwards = std::min(p - r, m);
    int ascending_backwards = 0;
    const auto next_ascending_backward = [&] {
      ops.push_back(Op::make(OpKind::backward_full,
                             leg(2 * waves - 1 - 2 * (ascending_backwards / m)),
                             ascending_backwards % m));
      ++ascending_backwards;
    };
    for (int j = 0; j < descending_forwards; ++j)
      ops.push_back(Op::make(OpKind::forward, leg(0), j));
    for (int w = 0; w < waves; ++w) {
      for (int j = 0; j < m; ++j) {
        ops.push_back(Op::make(OpKind::forward, leg(2 * w + 1), j));
        if (descending_forwards < per_leg) {
          ops.push_back(Op::make(OpKind::forward, leg(2 * (descending_forwards / m)),
                                 descending_forwards % m));
          ++descending_forwards;
        } else {
          next_ascending_backward();
        }
      }
    }
    for (int w = 0; w < waves; ++w) {
      for (int j = 0; j < m; ++j) {
        ops.push_back(Op::make(OpKind::backward_full, leg(2 * waves - 2 - 2 * w), j));
        if (ascending_backwards < per_leg)
          next_ascending_backward();
      }
    }
  }
  return schedule;
}

// `vm(F+Bf) + 2(p-1) max(F, Bf)` for m >= p, the full-stage form (docs/bounds.md, "Closed forms").
std::optional<Ticks> hanayo_closed_form(const UniformCosts &u) {
  if (u.c != Ticks{0} || u.m < u.p)
    return std::nullopt;
  return u.v * u.m * u.full() + 2 * (u.p - 1) * std::max(u.f, u.b + u.w);
}

} // namespace ppsim::schedules
